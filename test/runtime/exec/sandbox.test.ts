import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatByteSize, parseByteSize } from '../../../runtime/exec/byte-size.ts';
import { bubblewrapArgs, sandboxCommand, type SandboxPolicy } from '../../../runtime/exec/sandbox.ts';
import { probeSandbox } from '../../../runtime/exec/sandbox-probe.ts';
import { tempDir } from '../../helpers/project.ts';

const base: SandboxPolicy = { isolation: 'none', writable: ['/work'], hidden: [], network: true };

describe('sandboxCommand', () => {
  it('leaves the command alone without isolation or caps', () => {
    expect(sandboxCommand('python3', ['tool.py'], base)).toEqual({ command: 'python3', args: ['tool.py'] });
  });

  it('caps memory (RLIMIT_DATA, which Node survives) and CPU through prlimit, without namespaces', () => {
    expect(sandboxCommand('node', ['w.mjs'], { ...base, prlimit: '/usr/bin/prlimit', memoryBytes: 512 * 1024 ** 2, cpuSeconds: 2.5 })).toEqual({
      command: '/usr/bin/prlimit',
      args: [`--data=${512 * 1024 ** 2}`, '--cpu=3', '--', 'node', 'w.mjs'],
    });
  });

  it('caps the processes of a sandbox through prlimit inside it, where RLIMIT_NPROC counts the sandbox alone', () => {
    const { command, args } = sandboxCommand('python3', ['t.py'], { ...base, isolation: 'bubblewrap', bwrap: '/usr/bin/bwrap', prlimit: '/usr/bin/prlimit', processes: 64 });
    expect(command).toBe('/usr/bin/bwrap');
    expect(args.slice(args.indexOf('--'))).toEqual(['--', '/usr/bin/prlimit', '--nproc=64', '--', 'python3', 't.py']);
  });

  it('wraps in bwrap: namespaces, read-only system, private /tmp, then readable, writable, hidden and revealed paths in that order', () => {
    const { command, args } = sandboxCommand('sh', ['-c', 'true'], {
      ...base,
      isolation: 'bubblewrap',
      bwrap: '/usr/bin/bwrap',
      readable: ['/tmp/bundle'],
      writable: ['/tmp/work'],
      hidden: [{ path: '/tmp/work/.forge', kind: 'dir' }, { path: '/tmp/work/.forge/token', kind: 'file' }, { path: '/secrets/key', kind: 'file' }],
      reveal: ['/tmp/work/.forge/venv'],
      network: false,
      oneShot: true,
      cwd: '/tmp/work/sub',
    });
    expect(command).toBe('/usr/bin/bwrap');
    expect(args.join(' ')).toBe(
      `--die-with-parent --cap-drop ALL ${process.getuid?.() === 0 ? '--cap-add CAP_CHOWN --cap-add CAP_DAC_OVERRIDE --cap-add CAP_FOWNER ' : ''}--unshare-pid --unshare-ipc --unshare-uts --new-session --as-pid-1 --unshare-net ` +
        '--ro-bind / / --dev /dev --proc /proc --ro-bind /proc/sys /proc/sys --tmpfs /tmp --tmpfs /run --ro-bind /tmp/bundle /tmp/bundle --bind /tmp/work /tmp/work ' +
        '--tmpfs /tmp/work/.forge --ro-bind /dev/null /secrets/key --ro-bind /tmp/work/.forge/venv /tmp/work/.forge/venv ' +
        '--setenv FORGE_SANDBOX_PIDNS 1 --chdir /tmp/work/sub -- sh -c true',
    );
  });

  it('keeps the network and runs under bwrap\'s own pid 1 for a worker', () => {
    const args = bubblewrapArgs({ writable: ['/w'], hidden: [], network: true });
    expect(args).not.toContain('--unshare-net');
    expect(args).not.toContain('--as-pid-1');
  });

  it('runs a real command as pid 1 of its own namespace, seeing none of the host\'s processes', async () => {
    const probe = await probeSandbox();
    expect(probe.isolation, probe.reason).toBe('bubblewrap');
    const work = tempDir();
    mkdirSync(join(work, '.forge'));
    writeFileSync(join(work, '.forge', 'state'), 'secret state');
    const { command, args } = sandboxCommand('sh', ['-c', 'echo $$; ls /proc | grep -c "^[0-9]"; ls -A .forge | wc -l; echo hi > out.txt && echo wrote; touch /usr/x 2>/dev/null || echo ro'], {
      isolation: 'bubblewrap',
      bwrap: probe.bwrap,
      writable: [work],
      hidden: [{ path: join(work, '.forge'), kind: 'dir' }],
      network: false,
      oneShot: true,
    });
    const out = execFileSync(command, args, { encoding: 'utf8' }).trim().split('\n');
    expect(out).toEqual(['1', expect.stringMatching(/^[1-3]$/), '0', 'wrote', 'ro']);
  });
});

describe('sandbox probe', () => {
  it('reports isolation none with bwrap\'s own reason when namespaces are refused', async () => {
    const fake = join(tempDir(), 'bwrap');
    writeFileSync(fake, '#!/bin/sh\necho "bwrap: Creating new namespace failed: Operation not permitted" >&2\nexit 1\n', { mode: 0o755 });
    expect(await probeSandbox({ ...process.env, FORGE_BWRAP: fake })).toMatchObject({ isolation: 'none', reason: 'bubblewrap cannot create namespaces here: bwrap: Creating new namespace failed: Operation not permitted' });
  });

  it('reports a bwrap that cannot run, and no caps without prlimit', async () => {
    expect(await probeSandbox({ PATH: tempDir(), FORGE_PRLIMIT: '', FORGE_BWRAP: join(tempDir(), 'no-bwrap-here') })).toMatchObject({ isolation: 'none', reason: expect.stringContaining('bubblewrap cannot create namespaces here') });
  });
});

describe('byte sizes', () => {
  it.each([
    ['512MB', 512 * 1024 ** 2],
    ['1GiB', 1024 ** 3],
    ['1.5g', 1.5 * 1024 ** 3],
    ['256 k', 256 * 1024],
    ['1048576', 1024 ** 2],
    [4096, 4096],
  ] as const)('%s is %d bytes', (text, bytes) => {
    expect(parseByteSize(text)).toBe(bytes);
  });

  it.each(['', 'lots', '-1MB', '0', '1PB', 1.5])('refuses %s', (text) => {
    expect(parseByteSize(text as string)).toBeUndefined();
  });

  it('formats caps for people', () => {
    expect(formatByteSize(256 * 1024 ** 2)).toBe('256 MiB');
    expect(formatByteSize(1024 ** 3)).toBe('1 GiB');
    expect(formatByteSize(1000)).toBe('1000 B');
  });
});
