/**
 * cli_execute's git check against a directory it cannot read, as an agent
 * that is not root meets one: git can still enter a repository inside by its
 * path (a directory with mode 111 lets it), and that repository's config can
 * name a program git runs, so the check refuses instead of passing over it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AgentProcess } from '../helpers/agent-process.ts';
import { nobody, serveAs } from '../helpers/other-user.ts';
import { forge, writeProject } from '../helpers/project.ts';

const TOKEN = `tok-${process.pid}-${Date.now()}`;
let agent: AgentProcess;
let workDir: string;

beforeAll(async () => {
  const project = writeProject({
    'forge.yaml': 'agent_id: gitter\nversion: 1.0.0\ndescription: Runs git.\ntools:\n  - name: cli_execute\n    config: { allowed_binaries: [git] }\n',
  });
  const built = await forge(['build'], project);
  expect(built.code, built.stderr).toBe(0);
  ({ agent, workDir } = await serveAs(nobody(), project, {
    env: { FORGE_AUTH_TOKEN: TOKEN },
    prepare: (workDir) => {
      const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd });
      git(workDir, 'init', '-q');
      // A repository behind a directory the agent may pass through but not list, whose config names a filter.
      const sub = join(workDir, 'locked', 'sub');
      mkdirSync(sub, { recursive: true });
      git(sub, 'init', '-q');
      writeFileSync(join(sub, '.gitattributes'), '* filter=pwn\n');
      git(sub, 'config', 'filter.pwn.clean', 'touch pwned; cat');
      chmodSync(join(workDir, 'locked'), 0o111);
    },
  }));
}, 120_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
});

async function gitStatus(): Promise<{ ok: boolean; value?: any; error?: { code: string; message: string } }> {
  const res = await fetch(`${agent.url}/tools/cli_execute`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ binary: 'git', args: ['status', '--short'] }) });
  return (await res.json()) as { ok: boolean; value?: any; error?: { code: string; message: string } };
}

it('refuses git where a directory of the work tree cannot be read, naming it', async () => {
  const result = await gitStatus();
  expect(result.ok).toBe(false);
  expect(result.error?.message).toMatch(/locked cannot be read, so a nested repository in it .* cannot be checked/);
});

it('finds the repository once the directory can be read, and refuses it for its filter', async () => {
  chmodSync(join(workDir, 'locked'), 0o755);
  expect((await gitStatus()).error?.message).toMatch(/nested repository's configuration \(locked\/sub\) sets filter\.pwn\.clean/);
});
