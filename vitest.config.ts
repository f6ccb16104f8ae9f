import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { MACHINE_START_COSTS, pathPastPythonShim } from './bench/measure.ts';
import { suitePythonPath } from './test/helpers/suite-python.ts';

/**
 * Files that drive a real browser: Chromium needs the machine to itself to
 * keep its timing, so they run after everything else, one at a time.
 */
const ALONE = ['test/cli/studio/studio-browser.test.ts'];

/**
 * The files that take longest, longest first. Vitest starts the files that
 * took longest last time first; with no last time (a fresh clone, CI) it
 * starts the largest, and these small, slow files (real Postgres, runc,
 * sandboxes, many processes) would start late and run on alone at the end.
 */
const LONGEST = [
  'test/runtime/state/postgres-store.test.ts',
  'test/runtime/state/replicas.test.ts',
  'test/e2e/install-package.test.ts',
  'test/stages/package/package-runc.test.ts',
  'test/e2e/sandbox-attacks.test.ts',
  'test/e2e/adapters.test.ts',
  'test/stages/package/package-sandbox.test.ts',
  'test/e2e/exact-output/exact-output-cli.test.ts',
  'test/runtime/guard/file-tool-escapes.test.ts',
  'test/cli/dev-reload.test.ts',
  'test/stages/package/package-image.test.ts',
  'test/e2e/oldest-node.test.ts',
];

class LongestFirst extends BaseSequencer {
  async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = LONGEST.indexOf(relative(file.project.config.root, file.moduleId));
      return file.project.config.sequence.groupOrder * 100 + (at < 0 ? LONGEST.length : at);
    };
    // Stable: the rest keep the order vitest gave them.
    return sorted.map((file, i) => ({ file, i, rank: rank(file) })).sort((a, b) => a.rank - b.rank || a.i - b.i).map(({ file }) => file);
  }
}

const pythonPath = suitePythonPath(process.env.PATH) ?? pathPastPythonShim();

const shared = {
  // Stops what each test file started and removes its temp dirs when the file ends.
  setupFiles: ['test/clean-up-each-file.ts'],
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // The user and global tool scopes: empty unless a test makes its own, never the real ones. Forge's
  // machine-wide cache (runtime cores, base image blobs) is the suite's own, shared by its builds.
  //
  // This machine's start costs (bench/measure.ts: NODE_EXTRA_CA_CERTS, 40 ms in each of the ~1,000 node
  // processes the suite starts) are left out too; empty is unset to Node. No test reaches past
  // loopback with Node's TLS, and npm has its own cafile. python3 is a venv of the machine's interpreter
  // (test/helpers/suite-python.ts): past a version manager's shim (about 240 processes a run asked it,
  // 100–150 ms of CPU each), and past .pth files in its site-packages that run code at each of ~600
  // Python starts. The shim tests make their own shims.
  env: {
    FORGE_HOME: join(tmpdir(), 'forge-tests-no-home'),
    FORGE_GLOBAL_TOOLS: join(tmpdir(), 'forge-tests-no-global-tools'),
    FORGE_CACHE_DIR: join(tmpdir(), 'forge-tests-cache'),
    ...Object.fromEntries(MACHINE_START_COSTS.map((name) => [name, ''])),
    ...(pythonPath ? { PATH: pythonPath } : {}),
  },
};

export default defineConfig({
  test: {
    // CLI tests run the compiled `forge`; compile it from the current sources first.
    globalSetup: ['test/global-setup.ts'],
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: ALONE,
          // Most tests wait on real processes and servers rather than compute: two
          // files more than there are cores keep the cores busy (vitest's default,
          // cores − 1, runs a 2-core machine's files one at a time). On 2 cores: 182 s
          // with one more, 169 s with two, 165 s with three (the same CPU in each).
          maxWorkers: availableParallelism() + 2,
          // A worker runs file after file in one process instead of a fresh process and module graph per
          // file: 80 s less CPU per run on 2 cores. Files restore the environment they change (afterEach,
          // finally), and nothing in the sources keeps state between files that a test depends on.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'alone',
          include: ALONE,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
