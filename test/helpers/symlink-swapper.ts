/**
 * The attacker of a check-then-use race on a path: a separate process that
 * keeps swapping `sw` between the real directory and a symlink to `target`,
 * as fast as it can, bounded (it stops by itself after a minute or 5e6
 * rounds). Park names sit beside `sw`. The caller kills it when done.
 *
 * A tool that makes its parents (file_write) can make a new `sw` while the
 * real one is parked; the swapper then removes that one, or every rename
 * would fail from then on and the race would quietly stop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';

/**
 * `dwellMs`: how long each of the two states (the directory in place, the link in place) is held. 0 swaps
 * as fast as it can, which catches a window of microseconds; a check and a use milliseconds apart (a process
 * started in between) are caught more often by states that last about as long, as an attacker would pace them.
 */
export function startSymlinkSwapper(sw: string, target: string, dwellMs = 0): ChildProcess {
  const script = `
    const fs = require('node:fs');
    const [sw, dirParked, linkParked, target, dwell] = process.argv.slice(1);
    const hold = () => { if (+dwell > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, +dwell); };
    fs.symlinkSync(target, linkParked);
    const end = Date.now() + 60000;
    // The real directory is at sw or parked; while it is parked, a directory at sw is one the tool made.
    const clearMadeByTool = () => {
      try {
        if (fs.lstatSync(dirParked).isDirectory() && fs.lstatSync(sw).isDirectory()) fs.rmSync(sw, { recursive: true, force: true });
      } catch {}
    };
    const move = (from, to) => {
      try { fs.renameSync(from, to); } catch { clearMadeByTool(); }
    };
    for (let i = 0; i < 5e6 && Date.now() < end; i++) {
      move(sw, dirParked); move(linkParked, sw); hold(); move(sw, linkParked); move(dirParked, sw); hold();
    }`;
  const dir = dirname(sw);
  return spawn(process.execPath, ['-e', script, sw, join(dir, '.sw-dir'), join(dir, '.sw-link'), target, String(dwellMs)], { stdio: 'ignore' });
}

/** For a test file: starts swappers, and kills the one still running after each test. */
export function symlinkSwappers(): { start(sw: string, target: string, dwellMs?: number): ChildProcess } {
  let running: ChildProcess | undefined;
  afterEach(() => {
    if (running && running.exitCode === null) running.kill('SIGKILL');
    running = undefined;
  });
  return { start: (sw, target, dwellMs) => (running = startSymlinkSwapper(sw, target, dwellMs)) };
}

/**
 * Resolves once the swapper on `sw` has made its first swap (`sw` a link, or
 * the real directory parked): a race loop then spends its bounded calls
 * racing, not waiting for node to start on a loaded machine. 10 s at most.
 */
export async function swapping(sw: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  const swapped = () => {
    try {
      return lstatSync(sw).isSymbolicLink() || existsSync(join(dirname(sw), '.sw-dir'));
    } catch {
      return true; // between two renames: it runs
    }
  };
  while (!swapped()) {
    if (Date.now() > deadline) throw new Error(`the symlink swapper on ${sw} made no swap in 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
