/**
 * Forged tools on a state store replicas share (FORGE_STATE_URL, else
 * forge.yaml's `state:`): `forge tool forged remove` and `forge tool
 * promote` take a tool away there, so every replica drops it — a removal
 * from one work dir alone would come back from the store at the next start.
 */
import { isSharedStateUrl, openStateStore, stateUrl } from '../runtime/state/open-store.ts';
import { StateConfigError, type ForgedRecords } from '../runtime/state/store.ts';
import type { ForgedRecord } from '../runtime/tools/emergent/forged-store.ts';

export type Shared<T> = { shared: false } | { shared: true; value: T } | { error: StateConfigError };

/** Runs `use` on the shared store's forged tools, if the agent has such a store. */
export async function withSharedForged<T>(workDir: string, configured: string | undefined, use: (records: ForgedRecords) => Promise<T>, env: NodeJS.ProcessEnv = process.env): Promise<Shared<T>> {
  if (!isSharedStateUrl(stateUrl({ env, configured }))) return { shared: false };
  let store;
  try {
    store = await openStateStore({ workDir, env, configured });
  } catch (err) {
    if (err instanceof StateConfigError) return { error: err };
    throw err;
  }
  try {
    return store.forged ? { shared: true, value: await use(store.forged) } : { shared: false };
  } finally {
    await store.close();
  }
}

/** The records the shared store holds now (removed ones gone), by name. */
export async function sharedRecords(records: ForgedRecords): Promise<ForgedRecord[]> {
  const live = new Map<string, ForgedRecord>();
  for (const change of await records.since(0)) {
    if ('record' in change) live.set(change.record.request.name, change.record);
    else if ('removed' in change && live.get(change.removed.name)?.forgedAt === change.removed.forgedAt) live.delete(change.removed.name);
  }
  return [...live.values()].sort((a, b) => (a.request.name < b.request.name ? -1 : 1));
}

/** The shared store's record of `name`, if it holds one. */
export async function sharedRecord(records: ForgedRecords, name: string): Promise<ForgedRecord | undefined> {
  return (await sharedRecords(records)).find((r) => r.request.name === name);
}
