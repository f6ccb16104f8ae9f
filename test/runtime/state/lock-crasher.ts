/**
 * A lock taker that stops dead at a chosen point, for file-store-lock-litter.test.ts,
 * run as a process of its own (bundled by esbuild). It takes the lock on the
 * state dir, records a URL in it (serving) and releases it, as a server's life
 * does; its `stopAt`th change to the state dir (a file written, linked, renamed
 * or removed) is made, then it says "stopped" and hangs, for the test to kill
 * with SIGKILL there. One that reaches no such change says "done".
 *
 * The changes are counted by wrapping node:fs (syncBuiltinESMExports carries
 * the wrappers to the lock module's imports): the lock itself has no hook.
 *
 * argv: stateDir stopAt
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { resolve } from 'node:path';
import { lockFileStore } from '../../../runtime/state/file-store-lock.ts';

const [stateDir, stopAt] = [resolve(process.argv[2]!), Number(process.argv[3])];
let changes = 0;
const hang = new Int32Array(new SharedArrayBuffer(4));
for (const name of ['writeFileSync', 'linkSync', 'renameSync', 'unlinkSync'] as const) {
  const original = fs[name] as (...args: unknown[]) => unknown;
  (fs as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
    const result = original(...args);
    const paths = args.filter((a): a is string => typeof a === 'string' && a.startsWith(stateDir));
    if (paths.length && ++changes === stopAt) {
      process.stdout.write(`stopped after ${name} ${paths.join(' ')}\n`);
      Atomics.wait(hang, 0, 0); // until killed
    }
    return result;
  };
}
syncBuiltinESMExports();

const lock = await lockFileStore(stateDir, { leaseMs: 60_000 });
lock?.serving('http://127.0.0.1:1/');
lock?.release();
process.stdout.write(`done after ${changes} changes\n`);
