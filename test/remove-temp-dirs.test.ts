import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot, runProcess, tempDir } from './helpers/project.ts';

it('removes the temp dirs of each test file when it ends, in a worker that runs file after file', async () => {
  // The suite's own settings (one worker, files sharing its modules) and its setup file, on two files that each make a temp dir.
  const dir = tempDir();
  const log = join(dir, 'dirs.jsonl');
  const config = join(dir, 'vitest.config.mjs');
  writeFileSync(
    config,
    `export default { test: { root: ${JSON.stringify(repoRoot)}, include: ['test/fixtures/temp-dirs/*.check.ts'], setupFiles: ['test/remove-temp-dirs.ts'], isolate: false, maxWorkers: 1, fileParallelism: false } };\n`,
  );
  const run = await runProcess(process.execPath, [join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', config], { cwd: repoRoot, env: { TEMP_DIRS_LOG: log } });
  expect(run.code, run.stdout + run.stderr).toBe(0);
  const files = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { pid: number; dir: string; earlierStillThere: string[] });
  expect(files).toHaveLength(2);
  // One worker ran both: the case where a helper's own afterAll ran for the first file only.
  expect(files[0]!.pid).toBe(files[1]!.pid);
  // The first file's dir was gone before the second began, and the second's after the run.
  expect(files[1]!.earlierStillThere).toEqual([]);
  expect(files.map((file) => existsSync(file.dir))).toEqual([false, false]);
});
