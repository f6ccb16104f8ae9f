/**
 * Finds out, once at start, how tool processes can be isolated here: runs
 * bwrap with the very flags the sandbox uses around a no-op command. Some
 * container runtimes refuse namespaces (seccomp, no user namespaces); then
 * the answer is 'none' with the reason bwrap gave, and the caller decides
 * (forge.yaml's `sandbox: required` refuses to start; `auto` warns once).
 *
 * FORGE_BWRAP names another bwrap (tests point it at a program that fails
 * like a refusing runtime); FORGE_PRLIMIT another prlimit ('' for none).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, readlinkSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { bubblewrapArgs, type IsolationLevel } from './sandbox.ts';

export interface SandboxProbe {
  isolation: IsolationLevel;
  bwrap?: string;
  /** Present when memory and CPU caps can be applied. */
  prlimit?: string;
  /** Why isolation is 'none'. */
  reason?: string;
  /**
   * Whether the probe's sandbox had a user namespace of its own (the kernel then counts a
   * process cap per sandbox: process-cap.ts); absent when the probe could not tell.
   */
  ownUserNamespace?: boolean;
}

/** The prlimit that applies memory and CPU caps, with or without isolation (undefined: none here). */
export function findPrlimit(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return process.platform === 'linux' ? (env.FORGE_PRLIMIT !== undefined ? env.FORGE_PRLIMIT || undefined : findOnPath('prlimit', env)) : undefined;
}

/** `signal`: stops the probe's bwrap (a command that ends before it needed the answer does not wait for it). */
export async function probeSandbox(env: NodeJS.ProcessEnv = process.env, signal?: AbortSignal): Promise<SandboxProbe> {
  const prlimit = findPrlimit(env);
  const limits = prlimit ? { prlimit } : {};
  if (process.platform !== 'linux') return { isolation: 'none', ...limits, reason: `process sandboxing needs Linux (bubblewrap); this is ${process.platform}` };
  const bwrap = env.FORGE_BWRAP || findOnPath('bwrap', env);
  if (!bwrap) return { isolation: 'none', ...limits, reason: 'bubblewrap (bwrap) is not installed' };
  const tried = await tryBubblewrap(bwrap, signal);
  if (tried.refusal) return { isolation: 'none', bwrap, ...limits, reason: `bubblewrap cannot create namespaces here: ${tried.refusal}` };
  return { isolation: 'bubblewrap', bwrap, ...limits, ...(tried.ownUserNamespace !== undefined ? { ownUserNamespace: tried.ownUserNamespace } : {}) };
}

/**
 * Runs a command in a full sandbox: why bwrap failed, if it did, and whether the sandbox had
 * a user namespace of its own (its /proc/self/ns/user is not this process's; a set-user-ID
 * bwrap, or one run by root, makes none).
 */
function tryBubblewrap(bwrap: string, signal?: AbortSignal): Promise<{ refusal?: string; ownUserNamespace?: boolean }> {
  // Absolute programs: the probe must not depend on the PATH it was given. None found: the last, as it is.
  let command: string[] | undefined;
  for (const c of PROBE_COMMANDS) {
    const program = findOnPath(c.program, {});
    if (program) {
      command = [program, ...c.args];
      break;
    }
  }
  const last = PROBE_COMMANDS[PROBE_COMMANDS.length - 1];
  command ??= [last.program, ...last.args];
  const args = [...bubblewrapArgs({ writable: [], hidden: [], network: false, cwd: '/' }), '--', ...command];
  return new Promise((resolve) => {
    // Generous: on a loaded machine a slow start is not a refusal (a refusal answers at once).
    execFile(bwrap, args, { timeout: 60_000, windowsHide: true, signal }, (err, stdout, stderr) => {
      if (!err) {
        const inside = stdout.trim();
        return resolve(/^user:\[\d+\]$/.test(inside) ? { ownUserNamespace: inside !== ownUserNamespace() } : {});
      }
      if ((err as { killed?: boolean }).killed) return resolve({ refusal: 'bwrap did not answer within 60 s' });
      resolve({ refusal: stderr.trim().split('\n').pop() || (err as Error).message });
    });
  });
}

const USER_NAMESPACE = '/proc/self/ns/user';

/**
 * What the probe runs inside the sandbox, the first one found in SYSTEM_DIRS (an absolute
 * program as it is): readlink tells whether the sandbox had a user namespace of its own; the
 * others only whether bwrap ran. forge package looks for these in a base image (base-sandbox.ts).
 */
export const PROBE_COMMANDS: readonly { program: string; args: readonly string[] }[] = [
  { program: 'readlink', args: [USER_NAMESPACE] },
  { program: 'true', args: [] },
  { program: '/bin/sh', args: ['-c', ':'] },
];

function ownUserNamespace(): string | undefined {
  try {
    return readlinkSync(USER_NAMESPACE);
  } catch {
    return undefined;
  }
}

/**
 * The system's own directories first: a PATH that is stripped (or pointed elsewhere) does not
 * decide which sandbox runs. forge package looks in the same ones in a base image.
 */
export const SYSTEM_DIRS: readonly string[] = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'];

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  if (isAbsolute(name)) return isExecutable(name) ? name : undefined;
  for (const dir of [...SYSTEM_DIRS, ...(env.PATH ?? '').split(delimiter)]) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false; // not here
  }
}
