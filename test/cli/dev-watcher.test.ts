/**
 * cli/dev-watcher.ts on real files: a folder that appears while watching is
 * read by chokidar before it is watched, and what lands in it between the
 * two must not be lost.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { watchSources } from '../../cli/dev-watcher.ts';
import { tempDir } from '../helpers/project.ts';

/** An editor's save: a new file, renamed over the old one. */
const renameOver = (file: string, text: string) => {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
};

/** A tools/ folder in a temp dir under watchSources, and what it has reported. */
async function watchedTools(before: (tools: string) => void = () => {}) {
  const root = tempDir('forge-watch-');
  const tools = join(root, 'tools');
  mkdirSync(tools);
  before(tools);
  const reported = new Set<string>();
  const watcher = await watchSources([tools], (batch) => batch.forEach((path) => reported.add(path)));
  /** Waits until `path` is reported; the watcher is asynchronous, and a miss is a wait that never ends. */
  const reportedSoon = async (path: string, what: string) => {
    const deadline = Date.now() + 30_000;
    while (!reported.has(path)) {
      if (Date.now() > deadline) throw new Error(`${what}: ${path} was never reported`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { root, tools, reported, watcher, reportedSoon };
}

describe('watchSources', () => {
  it('sees saves in a sub-folder made while a new folder with many files is being read, in each of 30 rounds', async () => {
    const { root, tools, reported, watcher, reportedSoon } = await watchedTools();
    try {
      for (let round = 0; round < 30; round++) {
        // A folder made elsewhere and moved in whole, as a checkout or an unpacked archive: chokidar takes a while
        // to read its files, and before it has read them all it does not watch the folder.
        const staged = join(root, `staged-${round}`);
        mkdirSync(staged);
        for (let n = 0; n < 300; n++) writeFileSync(join(staged, `notes-${n}.txt`), '');
        const folder = join(tools, `package-${round}`);
        const tool = join(folder, 'sub', 'tool.py');
        renameSync(staged, folder);
        // A different moment of the read in each round (a place in it, not a duration anything waits for).
        await new Promise((r) => setTimeout(r, round % 10));
        mkdirSync(join(folder, 'sub'));
        renameOver(tool, 'one');
        await reportedSoon(folder, `round ${round}: the new folder`);
        await reportedSoon(tool, `round ${round}: the first save`);
        reported.clear();
        // The save a person makes next: it is only seen if the sub-folder is watched.
        renameOver(tool, 'two');
        await reportedSoon(tool, `round ${round}: the second save`);
        rmSync(folder, { recursive: true });
        await reportedSoon(folder, `round ${round}: the folder's delete`);
      }
    } finally {
      await watcher.close();
    }
  }, 600_000);

  it('sees saves in a folder deleted and made again at once (a checkout), and in a sub-folder made in it later', async () => {
    const { tools, reported, watcher, reportedSoon } = await watchedTools();
    try {
      // A new folder, so watched by watchSources itself as well as by chokidar, and a folder in it.
      const pkg = join(tools, 'pkg');
      mkdirSync(pkg);
      await reportedSoon(pkg, 'the new folder');
      for (let round = 0; round < 3; round++) {
        const folder = join(pkg, `lib-${round}`);
        mkdirSync(folder);
        await reportedSoon(folder, `round ${round}: the folder`);
        // Deleted and made again in one go: a watch of the deleted folder sees nothing of the new one.
        rmSync(folder, { recursive: true });
        mkdirSync(folder);
        reported.clear();
        renameOver(join(folder, 'tool.py'), 'one');
        await reportedSoon(join(folder, 'tool.py'), `round ${round}: a save in the folder made again`);
        mkdirSync(join(folder, 'sub'));
        await reportedSoon(join(folder, 'sub'), `round ${round}: a sub-folder of the folder made again`);
        renameOver(join(folder, 'sub', 'tool.py'), 'one');
        await reportedSoon(join(folder, 'sub', 'tool.py'), `round ${round}: a save in the sub-folder`);
      }
    } finally {
      await watcher.close();
    }
  }, 300_000);

  it('sees saves in a folder that was replaced by a file of its name and then made again', async () => {
    const { tools, reported, watcher, reportedSoon } = await watchedTools();
    try {
      const pkg = join(tools, 'pkg');
      mkdirSync(pkg);
      await reportedSoon(pkg, 'the new folder');
      const folder = join(pkg, 'lib');
      mkdirSync(folder);
      await reportedSoon(folder, 'the folder');
      reported.clear();
      rmSync(folder, { recursive: true });
      writeFileSync(folder, 'a file now');
      await reportedSoon(folder, 'the folder replaced by a file');
      reported.clear();
      rmSync(folder);
      mkdirSync(folder);
      await reportedSoon(folder, 'the folder made again');
      mkdirSync(join(folder, 'sub'));
      renameOver(join(folder, 'sub', 'tool.py'), 'one');
      await reportedSoon(join(folder, 'sub', 'tool.py'), 'a save in a sub-folder of the folder made again');
    } finally {
      await watcher.close();
    }
  }, 120_000);

  // Right under a watched folder (tools/ itself, watched by chokidar from the start), chokidar reported a folder
  // replaced by a file not at all, and a file replaced by a folder without ever watching the folder.
  for (const start of ['folder', 'file'] as const) {
    for (const settle of [true, false]) {
      const steps = start === 'folder' ? 'folder → file → folder' : 'file → folder';
      it(`sees saves in tools/lib after it goes ${steps}${settle ? ', each step reported before the next' : ' at once'}`, async () => {
        const { tools, reported, watcher, reportedSoon } = await watchedTools((dir) => (start === 'folder' ? mkdirSync(join(dir, 'lib')) : writeFileSync(join(dir, 'lib'), 'a file')));
        const lib = join(tools, 'lib');
        const step = async (what: string) => {
          if (!settle) return;
          await reportedSoon(lib, what);
          reported.clear();
        };
        try {
          if (start === 'folder') {
            rmSync(lib, { recursive: true });
            writeFileSync(lib, 'a file now');
            await step('the folder replaced by a file');
          }
          rmSync(lib);
          mkdirSync(lib);
          await step('the file replaced by a folder');
          renameOver(join(lib, 'tool.py'), 'one');
          await reportedSoon(join(lib, 'tool.py'), 'a save in the folder');
          mkdirSync(join(lib, 'sub'));
          renameOver(join(lib, 'sub', 'tool.py'), 'one');
          await reportedSoon(join(lib, 'sub', 'tool.py'), 'a save in a sub-folder of it');
          reported.clear();
          renameOver(join(lib, 'sub', 'tool.py'), 'two');
          await reportedSoon(join(lib, 'sub', 'tool.py'), 'the next save in the sub-folder');
        } finally {
          await watcher.close();
        }
      }, 120_000);
    }
  }
});
