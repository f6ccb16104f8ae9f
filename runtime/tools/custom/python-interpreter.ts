/**
 * Finds the real Python interpreter once per process. `python3` on PATH is
 * often a shim (pyenv, asdf) that costs more than the interpreter itself to
 * start, so every tool process is started with the resolved executable.
 * FORGE_PYTHON overrides the search (a virtualenv's python, for example).
 */
import { execFile } from 'node:child_process';
import { ForgeError } from '../../diagnostics.ts';

/** One lookup per FORGE_PYTHON value (undefined: search PATH). */
const resolved = new Map<string | undefined, Promise<string>>();

export class PythonNotFoundError extends ForgeError {
  constructor(message: string) {
    super('FORGE_PYTHON_MISSING', message);
  }
}

export function resolvePython(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const key = env.FORGE_PYTHON;
  let found = resolved.get(key);
  if (!found) {
    found = find(env).catch((err) => {
      resolved.delete(key); // try again next time (the user may install it)
      throw err;
    });
    resolved.set(key, found);
  }
  return found;
}

async function find(env: NodeJS.ProcessEnv): Promise<string> {
  const candidates = env.FORGE_PYTHON ? [env.FORGE_PYTHON] : process.platform === 'win32' ? ['python', 'py'] : ['python3', 'python'];
  for (const candidate of candidates) {
    const executable = await ask(candidate, env);
    if (executable) return executable;
  }
  throw new PythonNotFoundError(
    env.FORGE_PYTHON ? `FORGE_PYTHON=${env.FORGE_PYTHON} is not a working Python interpreter` : 'no Python 3 interpreter found on PATH (looked for python3 and python)',
  );
}

function ask(command: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      command,
      ['-c', 'import sys; sys.stdout.write(sys.executable if sys.version_info[0] == 3 else "")'],
      { env, timeout: 15_000, windowsHide: true },
      (err, stdout) => resolve(err || !stdout.trim() ? undefined : stdout.trim()),
    );
  });
}
