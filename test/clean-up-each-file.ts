/**
 * A setup file (vitest.config.ts): runs before every test file, also in a
 * worker that runs file after file in one module graph, so what a file
 * started and made is gone when that file ends — the helpers' processes,
 * servers and registries (helpers/file-cleanup.ts), then its temp dirs.
 * Without it each run of the suite left a gigabyte under /tmp and MCP
 * servers running. The tool sandbox a file installed goes too: it is the
 * process's, and the next file's tools would run under it, bound to a work
 * dir that is gone (bwrap: "Can't chdir").
 */
import { afterAll } from 'vitest';
import { uninstallToolSandbox } from '../runtime/exec/tool-sandbox.ts';
import { runFileCleanups } from './helpers/file-cleanup.ts';
import { removeTempDirs } from './helpers/project.ts';

afterAll(async () => {
  try {
    await runFileCleanups();
  } finally {
    uninstallToolSandbox();
    // Last: the processes stopped above may have had their work dirs there.
    removeTempDirs();
  }
});
