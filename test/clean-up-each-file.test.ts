import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { listeningOn } from './helpers/free-port.ts';
import { repoRoot, runProcess, tempDir } from './helpers/project.ts';

it('stops what each test file started, uninstalls the tool sandbox it installed and removes its temp dirs when it ends, in a worker that runs file after file', async () => {
  // The suite's own settings (one worker, files sharing its modules) and its setup file, on two files that each
  // make a temp dir and start server-everything over HTTP (a process of its own, through the helper the suite uses).
  const dir = tempDir();
  const log = join(dir, 'files.jsonl');
  const config = join(dir, 'vitest.config.mjs');
  writeFileSync(
    config,
    `export default { test: { root: ${JSON.stringify(repoRoot)}, include: ['test/fixtures/clean-up/*.check.ts'], setupFiles: ['test/clean-up-each-file.ts'], isolate: false, maxWorkers: 1, fileParallelism: false } };\n`,
  );
  const run = await runProcess(process.execPath, [join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', config], { cwd: repoRoot, env: { CLEAN_UP_LOG: log } });
  expect(run.code, run.stdout + run.stderr).toBe(0);
  const files = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { pid: number; dir: string; port: number; stillThere: { dirs: string[]; ports: number[] } });
  expect(files).toHaveLength(2);
  // One worker ran both: the case where a helper's own afterAll ran after the first file only.
  expect(files[0]!.pid).toBe(files[1]!.pid);
  // The first file's server was stopped and its dir removed before the second began; the second's, after the run.
  expect(files[1]!.stillThere).toEqual({ dirs: [], ports: [], sandbox: null });
  expect(files.map((file) => existsSync(file.dir))).toEqual([false, false]);
  expect(await listeningOn(files[1]!.port)).toBe(false);
});
