/**
 * An agent run as another user than the suite's root (as the generated
 * image runs it): `nobody`, with the bundle deployed in a work dir it owns
 * and Debian's python3 (pyenv's lives under /root, which nobody cannot read).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { startAgentProcess, type AgentProcess } from './agent-process.ts';
import { deployBundle, tempDir } from './project.ts';

export interface OtherUser {
  uid: number;
  gid: number;
}

export function nobody(): OtherUser {
  expect(process.getuid?.(), 'these tests start the agent as another user, which takes root (as the CI runs)').toBe(0);
  expect(existsSync('/usr/bin/python3'), "Debian's python3 (.ci/run installs it)").toBe(true);
  return { uid: Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' })) };
}

/** Deploys `project`'s bundle in a work dir `user` owns and serves it as `user`; `prepare` fills the work dir first; `wrapper` (prlimit …) goes before node. */
export async function serveAs(user: OtherUser, project: string, options: { env?: NodeJS.ProcessEnv; wrapper?: string[]; prepare?: (workDir: string) => void } = {}): Promise<{ agent: AgentProcess; workDir: string }> {
  const { workDir, bundle } = deployBundle(project, 'forge-as-user-');
  options.prepare?.(workDir);
  const home = tempDir('forge-as-user-home-');
  execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, workDir, home]);
  const [command, ...args] = [...(options.wrapper ?? []), process.execPath, join(bundle, 'runtime.mjs'), 'serve', '--port', '0'];
  const agent = await startAgentProcess(command, args, {
    cwd: workDir,
    ...user,
    env: { FORGE_PYTHON: '/usr/bin/python3', PATH: '/usr/bin:/bin', HOME: home, FORGE_CACHE_DIR: home, FORGE_STATE_DIR: join(home, 'state'), ...options.env },
  });
  return { agent, workDir };
}
