/**
 * The floor under every call to a tool worker: one line to a python3
 * process over a pipe and one line back, with nothing else on either side
 * (no JSON, no registry, no tool). Each direction wakes a process blocked
 * in read(); across cores that is an inter-processor interrupt, which in a
 * virtual machine costs tens of microseconds (on the 2-core development VM
 * this round trip reads about 0.085 ms across cores and 0.012 ms with both
 * processes pinned to one core). The warm worker rows are read against it:
 * what lies above it is Forge's.
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

const ECHO = 'import sys\nr, w = sys.stdin.buffer, sys.stdout.buffer\nfor line in iter(r.readline, b""):\n    w.write(line); w.flush()\n';

/** A python3 process that echoes each line: `trip()` sends one and resolves when it is back. */
export function pipeEcho(python: string): { trip(): Promise<void>; close(): void } {
  const child = spawn(python, ['-c', ECHO], { stdio: ['pipe', 'pipe', 'inherit'] });
  const input = child.stdin as Writable;
  let answered: (() => void) | undefined;
  (child.stdout as Readable).on('data', () => answered?.());
  return {
    trip: () =>
      new Promise<void>((resolve) => {
        answered = resolve;
        input.write('{"id":1,"args":{"n":1}}\n');
      }),
    close: () => {
      input.end();
      child.kill();
    },
  };
}
