/**
 * Finds the real Python interpreter once per process. `python3` on PATH is
 * often a shim (pyenv, asdf) that costs more than the interpreter itself to
 * start, so every tool process is started with the resolved executable.
 * FORGE_PYTHON overrides the search (a virtualenv's python, for example).
 *
 * A `python3` on PATH that is a compiled program (or a link to one: a
 * virtualenv's python) is the interpreter itself and is taken as found:
 * only a script shim, or a name that is not python3, is asked for
 * sys.executable, because starting Python costs ~100 ms, as much as the
 * rest of a `forge tool run`. The CLI also keeps a shim's answer between
 * commands (`keepShimAnswers`, stages/python/shim-answers.ts); a bundle
 * keeps none.
 */
import { execFile } from 'node:child_process';
import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { ForgeError } from '../../diagnostics.ts';

/** One lookup per FORGE_PYTHON value, or per PATH searched. */
const resolved = new Map<string, Promise<string>>();

export class PythonNotFoundError extends ForgeError {
  constructor(message: string) {
    super('FORGE_PYTHON_MISSING', message);
  }
}

/** The answer kept for a shim, or the way to keep the one about to be learned. */
export interface KeptShimAnswer {
  executable?: string;
  /** Keeps what the shim answered, for the next process; absent when nothing is kept (no shim, or an answer already kept). */
  remember?(executable: string): void;
}

/** Shim answers kept between processes. */
export interface ShimAnswers {
  /** `cwd`: where the shim will run (default: this process's working directory). */
  open(shim: string, env: NodeJS.ProcessEnv, cwd?: string): KeptShimAnswer | undefined;
}

let shimAnswers: ShimAnswers | undefined;

/** Where this process keeps and finds shim answers (the CLI: Forge's cache); none by default. */
export function keepShimAnswers(store: ShimAnswers | undefined): void {
  shimAnswers = store;
}

/**
 * What `python3` on PATH runs, when that is known without starting anything:
 * a compiled python3, or a shim whose answer was kept. Otherwise `remember`
 * keeps what the caller learns by running the shim itself (the build's source
 * check does, and reports sys.executable).
 */
export function python3WithoutAsking(env: NodeJS.ProcessEnv = process.env): KeptShimAnswer {
  const onPath = firstOnPath('python3', env);
  if (onPath === undefined) return {};
  // The first one found is the one a shell would run: if it is a shim, ask it.
  if (isCompiledProgram(realpathSync(onPath))) return { executable: onPath };
  return shimAnswers?.open(onPath, env) ?? {};
}

export function resolvePython(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const key = env.FORGE_PYTHON ? `FORGE_PYTHON=${env.FORGE_PYTHON}` : `PATH=${env.PATH ?? ''}`;
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

/**
 * The names tried on PATH, in order, without FORGE_PYTHON (not on Windows: python, py).
 * forge package looks for the same in a base image (base-interpreters.ts).
 */
export const PYTHON_COMMANDS: readonly string[] = ['python3', 'python'];

async function find(env: NodeJS.ProcessEnv): Promise<string> {
  const candidates = env.FORGE_PYTHON ? [env.FORGE_PYTHON] : process.platform === 'win32' ? ['python', 'py'] : PYTHON_COMMANDS;
  for (const candidate of candidates) {
    const known = candidate === 'python3' ? python3WithoutAsking(env) : undefined;
    if (known?.executable) return known.executable;
    const executable = await ask(candidate, env);
    if (executable) {
      known?.remember?.(executable);
      return executable;
    }
  }
  throw new PythonNotFoundError(
    env.FORGE_PYTHON ? `FORGE_PYTHON=${env.FORGE_PYTHON} is not a working Python interpreter` : `no Python 3 interpreter found on PATH (looked for ${candidates.join(' and ')})`,
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

/** The first executable file `name` on PATH: the one a shell would run. */
function firstOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  if (process.platform === 'win32') return undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      const stat = statSync(candidate);
      if (stat.isFile() && (stat.mode & 0o111) !== 0) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** ELF (Linux, BSD) or Mach-O (macOS, thin or universal): the file's first four bytes. */
const EXECUTABLE_MAGIC = new Set([0x7f454c46, 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe]);

function isCompiledProgram(path: string): boolean {
  const head = Buffer.alloc(4);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    return readSync(fd, head, 0, 4, 0) === 4 && EXECUTABLE_MAGIC.has(head.readUInt32BE(0));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
