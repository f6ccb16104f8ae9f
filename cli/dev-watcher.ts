/**
 * What `forge run --dev` watches: forge.yaml and the tool directories,
 * through chokidar. Node 20's recursive fs.watch on Linux loses a file
 * after an editor-style save (write a new file, rename it over the old
 * one) and never reports it again; chokidar re-arms its per-directory
 * watches on every rename, sees new folders, and reports deletes.
 * Changes arrive in batches: an editor's save is several events, and one
 * reload per save is what a person means.
 *
 * A folder that appears while watching is one chokidar reads first and
 * watches after: a file or folder put in it between the two (`git
 * checkout`, an unpacked archive, an editor's rename-over save into a folder
 * just made) is never reported, and a sub-folder missed so is never
 * watched, so every later save in it is lost. So each new folder is also
 * watched here (fs.watch, that folder only) from the moment chokidar
 * reports it, which is before chokidar reads it, and each folder found in
 * one is watched before it is listed: what happens in them is reported from
 * these watches, whatever chokidar sees of it.
 */
import { watch as watchNative, existsSync, lstatSync, readdirSync, type FSWatcher, type Stats } from 'node:fs';
import { basename, join, sep } from 'node:path';
import { watch } from 'chokidar';
import { isIgnoredFile, PRUNED_DIRS } from '../stages/source-tree.ts';
import { isDirectory } from '../runtime/is-directory.ts';

export interface SourceWatcher {
  close(): Promise<void>;
}

/** Resolves once the initial scan is done: from then on no save is missed. */
/** `depth`: how many folders deep to look under a watched directory (0: its own entries only; default: all). */
export async function watchSources(paths: string[], onBatch: (paths: string[]) => void, options: { settleMs?: number; depth?: number } = {}): Promise<SourceWatcher> {
  const roots = new Set(paths);
  const touched = new Set<string>();
  // What to look at when the events settle, in folders watched here; true: list the folder's entries too.
  const toCheck = new Map<string, boolean>();
  // New folders, watched here as well as by chokidar (see above), with the inode each watch follows.
  // dead: the folder it watched was deleted or moved away (one made again in its place may have the same inode).
  const bridges = new Map<string, { native: FSWatcher; ino: number; dead: boolean }>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  // Dependency folders, caches, hidden files and bytecode change often and never hold tools.
  const skipped = (path: string) => !roots.has(path) && (PRUNED_DIRS.has(basename(path)) || isIgnoredFile(basename(path)));
  const watcher = watch(paths, {
    ignoreInitial: true,
    // A save that replaces the file (unlink + add within a moment) arrives as one change.
    atomic: true,
    ignored: skipped,
    ...(options.depth !== undefined ? { depth: options.depth } : {}),
  });
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(flush, options.settleMs ?? 120);
  };
  const flush = () => {
    if (closed) return;
    if (toCheck.size) reconcile();
    if (!touched.size) return;
    const batch = [...touched];
    touched.clear();
    onBatch(batch);
  };
  const note = (path: string) => {
    touched.add(path);
    schedule();
  };
  /** Watches a new folder until it is deleted; what happens in it is looked at when the events settle. */
  const bridge = (dir: string) => {
    if (closed || bridges.has(dir)) return;
    let native: FSWatcher;
    try {
      native = watchNative(dir, (_event, name) => {
        if (!name) return;
        const path = join(dir, name.toString());
        // The folder's own delete or move is reported under its own name, with no such entry in it: its watch
        // follows what went, and chokidar may say nothing of a folder deleted and made again, or replaced by a
        // file, at once. So the folder itself is looked at.
        if (name.toString() === basename(dir) && !existsSync(path)) {
          const own = bridges.get(dir);
          if (own?.native === native) own.dead = true;
          if (!toCheck.has(dir)) toCheck.set(dir, false);
        } else if (!toCheck.has(path)) toCheck.set(path, false);
        schedule();
      });
    } catch {
      return; // Gone already: its parent's watch reports that.
    }
    native.on('error', () => unbridge(dir));
    let ino = -1;
    try {
      ino = lstatSync(dir).ino;
    } catch {
      // Gone already: looked at when the events settle, as a watch of another folder is not this one's.
    }
    bridges.set(dir, { native, ino, dead: false });
  };
  const unbridge = (dir: string) => {
    for (const [path, { native }] of bridges) {
      if (path !== dir && !path.startsWith(dir + sep)) continue;
      native.close();
      bridges.delete(path);
    }
  };
  /**
   * Reports what happened at the checked paths, entries of folders watched here: a file saved or deleted, and
   * a new folder with all it holds (watched before it is listed, so nothing put in it after is unseen). What
   * chokidar reports as well is one path in the batch, and one reload.
   */
  const reconcile = () => {
    const checks = [...toCheck];
    toCheck.clear();
    const visit = (path: string, listEntries: boolean) => {
      if (skipped(path)) return;
      let stats: Stats;
      try {
        stats = lstatSync(path);
      } catch {
        // Deleted (or renamed away): the reload drops what it was.
        note(path);
        unbridge(path);
        return;
      }
      if (!stats.isDirectory()) {
        // A folder replaced by a file: its watch follows what was deleted. (A link chokidar reported as a folder
        // keeps the watch chokidar's addDir armed.)
        if (!stats.isSymbolicLink()) unbridge(path);
        return note(path);
      }
      // A folder deleted and made again (a checkout, `rm -r` and `mkdir`): the watch follows the one deleted, so
      // the new one is watched and listed as any new folder is.
      const own = bridges.get(path);
      if (own && (own.dead || own.ino !== stats.ino)) unbridge(path);
      const fresh = !bridges.has(path);
      bridge(path);
      if (!fresh && !listEntries) return;
      note(path);
      let names: string[];
      try {
        names = readdirSync(path);
      } catch {
        return;
      }
      for (const name of names) visit(join(path, name), false);
    };
    for (const [path, listEntries] of checks) visit(path, listEntries);
  };
  for (const event of ['add', 'change', 'unlink'] as const) watcher.on(event, note);
  watcher.on('addDir', (path) => {
    note(path);
    // Only where every depth is watched: a folder below `depth` is reported and never watched, by design.
    if (options.depth !== undefined) return;
    // chokidar emits this before it reads the folder: watched from here, nothing put in it is missed.
    bridge(path);
    // And listed once the events settle, in case chokidar read it before saying so.
    toCheck.set(path, true);
  });
  watcher.on('unlinkDir', (path) => {
    note(path);
    unbridge(path);
  });
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  // A path right under a watched folder that goes folder → file → folder (or file → folder) at once is one
  // chokidar may report in part or not at all, and the folder made again is then never watched: every save in
  // it is lost. So the watched folders are watched here too, and what changes in them is looked at as in a new
  // folder: a folder made again is watched and listed, whatever chokidar says of it.
  if (options.depth === undefined) for (const root of roots) if (isDirectory(root)) bridge(root);
  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      for (const { native } of bridges.values()) native.close();
      bridges.clear();
      await watcher.close();
    },
  };
}
