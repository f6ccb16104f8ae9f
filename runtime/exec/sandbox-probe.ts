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
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { bubblewrapArgs, type IsolationLevel } from './sandbox.ts';

export interface SandboxProbe {
  isolation: IsolationLevel;
  bwrap?: string;
  /** Present when memory and CPU caps can be applied. */
  prlimit?: string;
  /** Why isolation is 'none'. */
  reason?: string;
}

export async function probeSandbox(env: NodeJS.ProcessEnv = process.env): Promise<SandboxProbe> {
  const prlimit = process.platform === 'linux' ? (env.FORGE_PRLIMIT !== undefined ? env.FORGE_PRLIMIT || undefined : findOnPath('prlimit', env)) : undefined;
  const limits = prlimit ? { prlimit } : {};
  if (process.platform !== 'linux') return { isolation: 'none', ...limits, reason: `process sandboxing needs Linux (bubblewrap); this is ${process.platform}` };
  const bwrap = env.FORGE_BWRAP || findOnPath('bwrap', env);
  if (!bwrap) return { isolation: 'none', ...limits, reason: 'bubblewrap (bwrap) is not installed' };
  const refusal = await tryBubblewrap(bwrap);
  if (refusal) return { isolation: 'none', bwrap, ...limits, reason: `bubblewrap cannot create namespaces here: ${refusal}` };
  return { isolation: 'bubblewrap', bwrap, ...limits };
}

/** The reason bwrap failed, or undefined when it ran a command in a full sandbox. */
function tryBubblewrap(bwrap: string): Promise<string | undefined> {
  const args = [...bubblewrapArgs({ writable: [], hidden: [], network: false, cwd: '/' }), '--', 'true'];
  return new Promise((resolve) => {
    execFile(bwrap, args, { timeout: 10_000, windowsHide: true }, (err, _stdout, stderr) => {
      if (!err) return resolve(undefined);
      resolve(stderr.trim().split('\n').pop() || (err as Error).message);
    });
  });
}

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
