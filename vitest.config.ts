import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * Files that drive a real browser: Chromium needs the machine to itself to
 * keep its timing, so they run after everything else, one at a time.
 */
const ALONE = ['test/cli/studio/studio-browser.test.ts'];

const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // The user and global tool scopes: empty unless a test makes its own, never the real ones. Forge's
  // machine-wide cache (runtime cores, base image blobs) is the suite's own, shared by its builds.
  env: { FORGE_HOME: join(tmpdir(), 'forge-tests-no-home'), FORGE_GLOBAL_TOOLS: join(tmpdir(), 'forge-tests-no-global-tools'), FORGE_CACHE_DIR: join(tmpdir(), 'forge-tests-cache') },
};

export default defineConfig({
  test: {
    // CLI tests run the compiled `forge`; compile it from the current sources first.
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: ALONE,
          // Most tests wait on real processes and servers rather than compute: one
          // file more than there are cores keeps the cores busy (vitest's default,
          // cores − 1, runs a 2-core machine's files one at a time).
          maxWorkers: availableParallelism() + 1,
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
