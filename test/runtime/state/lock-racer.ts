/**
 * One racer of file-store-lock-race.test.ts, run as a process of its own
 * (bundled by esbuild): it says "ready", waits for the go file, then takes
 * the lock on the state dir and says whether it won. A winner holds on (a
 * live holder, as a server) until its stdin ends.
 *
 * argv: stateDir goFile
 */
import { existsSync } from 'node:fs';
import { lockFileStore } from '../../../runtime/state/file-store-lock.ts';

const [stateDir, goFile] = process.argv.slice(2) as [string, string];
process.stdout.write('ready\n');
// Waits without spinning (two cores, several racers), to within a millisecond of the go.
const sleep = new Int32Array(new SharedArrayBuffer(4));
while (!existsSync(goFile)) Atomics.wait(sleep, 0, 0, 1);
let result: { won: boolean; code?: string };
try {
  const lock = await lockFileStore(stateDir, { leaseMs: 60_000 });
  result = lock ? { won: true } : { won: false, code: 'no lock taken' };
} catch (err) {
  result = { won: false, code: (err as { code?: string }).code ?? String(err) };
}
process.stdout.write(JSON.stringify({ pid: process.pid, ...result }) + '\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
