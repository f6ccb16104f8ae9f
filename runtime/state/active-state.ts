/**
 * The state store of this process, for the tools that keep state (the
 * schedule tools, file_create): the one `serve` opened, or — in a process
 * that does not serve (`node runtime.mjs call`, `forge tool run`) — one
 * opened on first use from FORGE_STATE_URL, else the work dir's files.
 */
import type { StateStore } from './store.ts';

/** A watcher's answer: what it does before the store may be used (undefined: nothing). Its failures are its own to report. */
type StateWatcher = (store: StateStore | undefined) => Promise<void> | void;

let active: StateStore | undefined;
const opened = new Map<string, Promise<StateStore>>();
const watchers = new Set<StateWatcher>();

/** Makes `store` this process's; resolves when what the watchers do first with it is done (or failed). */
export async function setActiveState(store: StateStore | undefined): Promise<void> {
  active = store;
  // async: a watcher that throws is a rejection here, settled like the others.
  await Promise.allSettled([...watchers].map(async (watcher) => watcher(store)));
}

/**
 * Tells `watcher` the store `serve` uses — now if there is one, and each time
 * it changes — for what must follow it from the start (forge_tool registers
 * the tools other replicas forged, and drops those removed meanwhile, before
 * serve answers anyone); returns the unsubscribe.
 */
export function watchActiveState(watcher: StateWatcher): () => void {
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
