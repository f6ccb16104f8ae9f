/**
 * The sandbox a stdio MCP server starts in: under bubblewrap, a fresh /proc
 * and the agent's secret files hidden, but the host's /tmp and /run (where
 * servers are given paths and sockets) as they are, writable; without
 * bubblewrap (none installed, mode off, or the platform's refusal) the
 * command as it is.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { probeSandbox } from '../../../runtime/exec/sandbox-probe.ts';
import { serverProcessCommand } from '../../../runtime/exec/server-sandbox.ts';
import { hideFromTools, installToolSandbox, uninstallToolSandbox } from '../../../runtime/exec/tool-sandbox.ts';
import { tempDir } from '../../helpers/project.ts';

afterEach(() => uninstallToolSandbox());

const run = (command: { command: string; args: string[] }) => execFileSync(command.command, command.args, { encoding: 'utf8' });

it('starts a server under bubblewrap: its own /proc, the key file and state dir hidden, the host /tmp and /run readable and writable', async () => {
  const probe = await probeSandbox();
  expect(probe.isolation, probe.reason).toBe('bubblewrap');
  const workDir = tempDir('forge-server-work-');
  installToolSandbox(probe, { mode: 'auto' }, workDir);
  writeFileSync(join(workDir, '.forge', 'approvals.json'), 'state\n');
  const secrets = tempDir('forge-server-secrets-');
  writeFileSync(join(secrets, 'model.key'), 'sk-secret\n');
  hideFromTools(join(secrets, 'model.key'));
  const data = tempDir('forge-server-data-');
  writeFileSync(join(data, 'in.txt'), 'given\n');
  // The suite runs as root here (like the CI): a dir under /run stands for a host daemon's.
  const runDir = join('/run', `forge-server-sandbox-${process.pid}`);
  mkdirSync(runDir);
  try {
    writeFileSync(join(runDir, 'sock-info'), 'host run\n');
    const script = [
      'ls /proc | grep -c "^[0-9]"',
      `cat ${secrets}/model.key 2>/dev/null; echo "key read: $?"`,
      `ls -A ${workDir}/.forge | wc -l`,
      `cat ${data}/in.txt ${runDir}/sock-info`,
      `echo written > ${data}/out.txt`,
      // Run as root (as here): root's file capabilities only, so it cannot unmount what hides a path.
      'grep ^CapEff: /proc/self/status',
    ].join('\n');
    const output = run(serverProcessCommand('/bin/sh', ['-c', script], workDir));
    expect(output).not.toContain('sk-secret');
    const [pids, key, state, ...rest] = output.split('\n');
    expect(Number(pids)).toBeLessThan(5);
    // /dev/null over it, refused on the read-only mount: the read fails, as it does for tools.
    expect(key).toBe('key read: 1');
    expect(state).toBe('0');
    expect(rest.slice(0, 3)).toEqual(['given', 'host run', `CapEff:\t${process.getuid?.() === 0 ? '000000000000000b' : '0000000000000000'}`]);
    expect(readFileSync(join(data, 'out.txt'), 'utf8')).toBe('written\n');
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
});

it('starts a server as it is without bubblewrap: nothing installed, mode off, or a platform that refuses it', async () => {
  const probe = await probeSandbox();
  expect(serverProcessCommand('/bin/echo', ['hi'], '/')).toEqual({ command: '/bin/echo', args: ['hi'] });
  installToolSandbox(probe, { mode: 'off' }, tempDir());
  expect(serverProcessCommand('/bin/echo', ['hi'], '/')).toEqual({ command: '/bin/echo', args: ['hi'] });
  installToolSandbox({ isolation: 'none', reason: 'namespaces refused' }, { mode: 'auto' }, tempDir());
  expect(serverProcessCommand('/bin/echo', ['hi'], '/')).toEqual({ command: '/bin/echo', args: ['hi'] });
});
