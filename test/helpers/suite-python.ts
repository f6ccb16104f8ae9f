/**
 * The python3 the suite's tests find on PATH: a venv of the machine's
 * interpreter, made once and kept in the temp dir.
 *
 * The interpreter's own site-packages may hold .pth files that run code at
 * every start. This machine's imports certifi (to append a proxy's CA to
 * its bundle): 36 ms of a 50 ms start, in each of the ~600 Python processes
 * a suite run starts (tool workers, source checks, doctor). A venv reads
 * only its own site-packages, so it starts in about 15 ms, with the same
 * interpreter, standard library and pip. A container has no such files.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** PATH with the suite's venv first; undefined (keep PATH) when there is no python3 or it cannot make a venv. */
export function suitePythonPath(path: string | undefined): string | undefined {
  const env = { ...process.env, PATH: path };
  let base: string;
  try {
    // The interpreter itself, past any version manager's shim (pyenv, asdf): the venv links to it.
    base = execFileSync('python3', ['-c', 'import sys; sys.stdout.write(sys.executable)'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  if (!base) return undefined;
  const venv = join(tmpdir(), `forge-tests-python-${createHash('sha256').update(base).digest('hex').slice(0, 12)}`);
  // existsSync follows the link to the interpreter: a reinstalled or removed one makes a new venv.
  if (!existsSync(join(venv, 'bin', 'python3'))) {
    // Made aside and renamed into place, so a suite starting meanwhile finds none or a whole one.
    // (Its pip scripts name the first path; the suite runs python3 -m pip.)
    const making = `${venv}.${process.pid}.tmp`;
    try {
      rmSync(venv, { recursive: true, force: true });
      // With pip (a test runs python3 -m pip), but not the machine's site-packages.
      execFileSync(base, ['-m', 'venv', making], { env, stdio: 'ignore' });
      renameSync(making, venv);
    } catch {
      rmSync(making, { recursive: true, force: true });
      if (!existsSync(join(venv, 'bin', 'python3'))) return undefined;
    }
  }
  return `${join(venv, 'bin')}${delimiter}${path ?? ''}`;
}
