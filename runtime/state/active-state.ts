/**
 * The state store of this process, for the tools that keep state (the
 * schedule tools, file_create): the one `serve` opened, or — in a process
 * that does not serve (`node runtime.mjs call`, `forge tool run`) — one
 * opened on first use from FORGE_STATE_URL, else the work dir's files.
 */
import type { StateStore } from './store.ts';

let active: StateStore | undefined;
const opened = new Map<string, Promise<StateStore>>();
const watchers = new Set<(store: StateStore | undefined) => void>();

export function setActiveState(store: StateStore | undefined): void {
  active = store;
  for (const watcher of [...watchers]) watcher(store);
}

/**
 * Tells `watcher` the store `serve` uses — now if there is one, and each time
 * it changes — for what must follow it from the start (forge_tool registers
 * the tools other replicas forged); returns the unsubscribe.
 */
export function watchActiveState(watcher: (store: StateStore | undefined) => void): () => void {
  watchers.add(watcher);
  if (active) watcher(active);
  return () => watchers.delete(watcher);
}

export function activeState(workDir: string, env: NodeJS.ProcessEnv = process.env): Promise<StateStore> {
  if (active) return Promise.resolve(active);
  const key = `${workDir}\u0000${env.FORGE_STATE_URL ?? ''}`;
  let store = opened.get(key);
  if (!store) {
    store = import('./open-store.ts').then(({ openStateStore }) => openStateStore({ workDir, env }));
    opened.set(key, store);
    store.catch(() => opened.delete(key));
  }
  return store;
}

/** Closes the stores opened on first use (a `call` that used Postgres must not keep the process alive). */
export async function closeOpenedStates(): Promise<void> {
  const stores = [...opened.values()];
  opened.clear();
  await Promise.allSettled(stores.map(async (store) => (await store).close()));
}
