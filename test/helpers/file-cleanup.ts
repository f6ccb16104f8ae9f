/**
 * Clean-ups that run when each test file ends: stopping the processes,
 * servers and registries a helper started for the file. Vitest's workers
 * run file after file in one module graph (isolate: false), so a helper's
 * own top-level afterAll would be registered once per worker and run after
 * its first file only; helpers register here instead, and the setup file
 * test/clean-up-each-file.ts runs every clean-up after every file.
 */
const cleanups: (() => unknown)[] = [];

/** Registers `cleanup` to run at the end of every test file (once per helper module, at its top level). */
export function onFileEnd(cleanup: () => unknown): void {
  cleanups.push(cleanup);
}

/** Runs every clean-up, the last registered first; one that throws does not keep the others from running. */
export async function runFileCleanups(): Promise<void> {
  const errors: unknown[] = [];
  for (const cleanup of [...cleanups].reverse()) {
    try {
      await cleanup();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, 'clean-ups at the end of the test file failed');
}
