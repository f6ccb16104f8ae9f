/**
 * What `forge run --dev` watches: forge.yaml and the tool directories,
 * through chokidar. Node 20's recursive fs.watch on Linux loses a file
 * after an editor-style save (write a new file, rename it over the old
 * one) and never reports it again; chokidar re-arms its per-directory
 * watches on every rename, sees new folders, and reports deletes.
 * Changes arrive in batches: an editor's save is several events, and one
 * reload per save is what a person means.
 */
import { basename } from 'node:path';
import { watch } from 'chokidar';
import { isIgnoredFile, PRUNED_DIRS } from '../stages/source-tree.ts';

export interface SourceWatcher {
  close(): Promise<void>;
}

/** Resolves once the initial scan is done: from then on no save is missed. */
/** `depth`: how many folders deep to look under a watched directory (0: its own entries only; default: all). */
export async function watchSources(paths: string[], onBatch: (paths: string[]) => void, options: { settleMs?: number; depth?: number } = {}): Promise<SourceWatcher> {
  const roots = new Set(paths);
  const touched = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(paths, {
    ignoreInitial: true,
    // A save that replaces the file (unlink + add within a moment) arrives as one change.
    atomic: true,
    // Dependency folders, caches, hidden files and bytecode change often and never hold tools.
    ignored: (path) => !roots.has(path) && (PRUNED_DIRS.has(basename(path)) || isIgnoredFile(basename(path))),
    ...(options.depth !== undefined ? { depth: options.depth } : {}),
  });
  const note = (path: string) => {
    touched.add(path);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const batch = [...touched];
      touched.clear();
      onBatch(batch);
    }, options.settleMs ?? 120);
  };
  for (const event of ['add', 'change', 'unlink', 'addDir', 'unlinkDir'] as const) watcher.on(event, note);
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    close: async () => {
      clearTimeout(timer);
      await watcher.close();
    },
  };
}
