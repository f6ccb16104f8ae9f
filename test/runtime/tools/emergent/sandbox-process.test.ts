/**
 * The sandbox process a forged tool's code runs in, attacked the ways code
 * tries to get out: files, processes, the network, the host's Function,
 * endless loops, memory and output. Each attempt is an error result, and
 * the same sandbox serves a good call right after.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startServer } from '../../../helpers/http-server.ts';
import { tempDir } from '../../../helpers/project.ts';
import { permissionFlag } from '../../../../runtime/node-lines.ts';
import { probeSandbox } from '../../../../runtime/exec/sandbox-probe.ts';
import { hideFromTools, installToolSandbox, uninstallToolSandbox } from '../../../../runtime/exec/tool-sandbox.ts';
import { MAX_BRIDGE_CALLS, processSandboxSeam, SandboxProcess, sandboxCommand, sandboxDataBytes, type BridgeHandler } from '../../../../runtime/tools/emergent/sandbox-process.ts';

const hits: string[] = [];
const server = await startServer((req, res) => {
  hits.push(req.url ?? '');
  res.end('reached');
});
afterAll(() => new Promise<void>((resolve) => server.server.close(() => resolve())));

const ESCAPES: [string, string, RegExp][] = [
  ['reading a file with require', 'return require("node:fs").readFileSync("/etc/passwd", "utf8");', /require is not defined/],
  ['reading a file through process', 'return process.mainModule.require("fs").readFileSync("/etc/passwd", "utf8");', /process is not defined/],
  ['writing a file', 'require("fs").writeFileSync("/tmp/forge-escape", "x"); return 1;', /require is not defined/],
  ['spawning a process', 'return require("child_process").execSync("id").toString();', /require is not defined/],
  ['importing a module', 'return await import("node:child_process");', /import/i],
  ['the host Function through constructor.constructor', 'return ({}).constructor.constructor("return process")().pid;', /Code generation from strings disallowed/],
  ['the host Function through the bridge', 'return tools.call.constructor("return process")().pid;', /Code generation from strings disallowed/],
  ['the host Function through the input', 'return input.constructor.constructor("return process")().pid;', /Code generation from strings disallowed/],
  ['eval', 'return eval("1 + 1");', /Code generation from strings disallowed/],
  ['the network, with a WebSocket', `return new WebSocket("${server.url.replace('http', 'ws')}/ws");`, /WebSocket is not defined/],
  ['the network, through fetch off the allowlist', `return await fetch("${server.url}/direct");`, /not in the allowlist/],
  ['an endless loop', 'while (true) {}', /time cap of 1500 ms/],
  // The chain never yields to I/O; it ends at whichever cap it reaches first.
  ['an endless promise chain', 'const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {});', /time cap of 1500 ms|memory cap of 32 MB/],
  ['a memory bomb', 'const a = []; while (true) a.push(new Array(1e6).fill(7));', /memory cap of 32 MB/],
  ['a huge result', 'return "x".repeat(5e6);', /the limit is 1048576/],
];

/** The processes whose command line names `file` (prlimit execs node, so the sandbox's node is one). */
/** The processes still running `file` once none is left, or when `ms` have passed. */
async function goneWithin(file: string, ms: number): Promise<string[]> {
  const deadline = Date.now() + ms;
  while (processesRunning(file).length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return processesRunning(file);
}

function processesRunning(file: string): string[] {
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(file);
      } catch {
        return false;
      }
    });
}

const fetchBridge: BridgeHandler = async () => ({ ok: false, error: 'fetch to 127.0.0.1 is not in the allowlist (allowed: none)' });

describe('sandbox process', () => {
  it('starts node under the permission model, reading only its own code', async () => {
    const { command, args } = await sandboxCommand('/x/code.js', { tools: [], hosts: [] }, { memoryMb: 32, timeoutMs: 1000 });
    const all = [command, ...args];
    expect(all).toContain(permissionFlag());
    expect(all.filter((a) => a.startsWith('--allow-'))).toEqual(['--allow-fs-read=/x/code.js']);
    expect(all).toContain('--max-old-space-size=32');
    if (command.endsWith('prlimit')) expect(args.slice(0, args.indexOf('--'))).toEqual(['--fsize=0', '--core=0', '--nofile=64', '--cpu=120', `--data=${await sandboxDataBytes(32)}`]);
  });

  it.each(ESCAPES)('refuses %s, and serves the next call', async (_name, body, message) => {
    const dir = tempDir();
    const file = join(dir, 'code.js');
    writeFileSync(file, `async function execute(input) { if (input.good) return { fine: true }; ${body} }`);
    const sandbox = new SandboxProcess(file, { tools: [], hosts: [] }, { memoryMb: 32, timeoutMs: 1500 });
    try {
      const outcome = await sandbox.call({ good: false }, fetchBridge);
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.message).toMatch(message);
      expect(await sandbox.call({ good: true }, fetchBridge)).toMatchObject({ ok: true, value: { fine: true } });
      expect(hits).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });

  it('stops memory outside the JS heap (ArrayBuffers) at the data cap, quickly, and ends the process', async () => {
    const file = join(tempDir(), 'code.js');
    // Past the data cap by 128 MB, in 16 MB buffers touched page by page: outside --max-old-space-size, only RLIMIT_DATA stops it.
    const chunks = Math.ceil(((await sandboxDataBytes(32)) + 128 * 2 ** 20) / 2 ** 24);
    writeFileSync(file, `function execute(input) { if (input.small) return { bytes: new Uint8Array(4 << 20).fill(1).length }; const kept = []; for (let i = 0; i < ${chunks}; i++) kept.push(new Uint8Array(1 << 24).fill(1)); return kept.length; }`);
    const sandbox = new SandboxProcess(file, { tools: [], hosts: [] }, { memoryMb: 32, timeoutMs: 30_000 });
    try {
      const outcome = await sandbox.call({}, fetchBridge);
      expect(outcome).toMatchObject({ ok: false, code: 'FORGE_SANDBOX_MEMORY', message: expect.stringContaining('memory cap of 32 MB') });
      expect(outcome.durationMs).toBeLessThan(10_000);
      // The process is killed as the call fails; on a loaded machine it may take a moment to be gone.
      expect(await goneWithin(file, 5_000)).toEqual([]);
      // A tool within its memory still runs, in a new process.
      expect(await sandbox.call({ small: true }, fetchBridge)).toMatchObject({ ok: true, value: { bytes: 4 << 20 } });
    } finally {
      await sandbox.close();
    }
  });

  it('answers at most MAX_BRIDGE_CALLS bridge calls per call', async () => {
    const file = join(tempDir(), 'code.js');
    writeFileSync(file, 'async function execute() { let ok = 0; let refused; for (let i = 0; i < 150; i++) { try { await fetch("http://x/"); ok++; } catch (e) { refused = e.message; } } return { ok, refused }; }');
    const sandbox = new SandboxProcess(file, { tools: [], hosts: ['x'] }, { memoryMb: 32, timeoutMs: 10_000 });
    try {
      expect(await sandbox.call({}, async () => ({ ok: true, value: {} }))).toMatchObject({ ok: true, value: { ok: MAX_BRIDGE_CALLS, refused: `one call may make at most ${MAX_BRIDGE_CALLS} tool calls and fetches` } });
    } finally {
      await sandbox.close();
    }
  });

  it('hands the code no host object when a tools.call at the edge of the stack fails in the host\'s half of the bridge, and the call still ends', async () => {
    // Each unwinding frame near the stack's end calls tools.call, until `calls` went out: some overflow in
    // the context, some in the host's function behind it, whose RangeError (the host's, with the host's
    // Object.prototype behind it) reached the code as the call's rejection (4 or 5 calls did that here);
    // some overflowed inside the host's stdout write and left the process unable to answer at all (20).
    const file = join(tempDir(), 'code.js');
    writeFileSync(
      file,
      `async function execute(input) {
        const seen = [];
        const calls = [];
        function rec() {
          try { rec(); } catch (e) {
            if (calls.length >= input.calls) throw e;
            try { calls.push(tools.call('echo', {}).catch((r) => seen.push(r))); } catch (thrown) { seen.push(thrown); }
            throw e;
          }
        }
        try { rec(); } catch {}
        await Promise.all(calls);
        const foreign = seen.filter((r) => r === null || typeof r !== 'object' || !(r instanceof Error)).length;
        // The bridge still answers a call made from a stack with room.
        return { calls: calls.length, foreign, after: await tools.call('echo', {}) };
      }`,
    );
    const sandbox = new SandboxProcess(file, { tools: ['echo'], hosts: [] }, { memoryMb: 64, timeoutMs: 5000 });
    try {
      const echo: BridgeHandler = async () => ({ ok: true, value: 'echoed' });
      for (const calls of [4, 5, 20]) expect(await sandbox.call({ calls }, echo)).toMatchObject({ ok: true, value: { calls, foreign: 0, after: 'echoed' } });
    } finally {
      await sandbox.close();
    }
  });

  it('runs inside the host\'s bubblewrap sandbox when the agent installed one: no network, the code readable', async () => {
    const probe = await probeSandbox();
    expect(probe.isolation, probe.reason).toBe('bubblewrap'); // bubblewrap is part of the test machine (.ci/run)
    const workDir = tempDir();
    installToolSandbox(probe, { mode: 'auto' }, workDir);
    try {
      const dir = join(workDir, '.forge', 'forged', 'probe');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, 'code.js');
      writeFileSync(file, 'function execute(input) { return { twice: input.n * 2 }; }');
      const { command, args } = await sandboxCommand(file, { tools: [], hosts: [] }, { memoryMb: 32, timeoutMs: 5000 });
      expect(command).toBe(probe.bwrap);
      expect(args).toEqual(expect.arrayContaining(['--unshare-net', '--unshare-pid', '--die-with-parent']));
      // The state dir hidden, then the code's own dir bound back over it.
      const hiddenAt = args.join('\0').indexOf(['--tmpfs', join(workDir, '.forge')].join('\0'));
      const revealedAt = args.join('\0').indexOf(['--ro-bind', dir, dir].join('\0'));
      expect(hiddenAt).toBeGreaterThan(0);
      expect(revealedAt).toBeGreaterThan(hiddenAt);
      const sandbox = new SandboxProcess(file, { tools: [], hosts: [] }, { memoryMb: 32, timeoutMs: 5000 });
      try {
        expect(await sandbox.call({ n: 21 }, fetchBridge)).toMatchObject({ ok: true, value: { twice: 42 } });
      } finally {
        await sandbox.close();
      }
    } finally {
      uninstallToolSandbox();
    }
  });

  it('keeps the secrets every tool process has hidden by itself, without Node\'s permission model (which Node does not hold against malicious code)', async () => {
    const probe = await probeSandbox();
    expect(probe.isolation, probe.reason).toBe('bubblewrap');
    // Outside /tmp, which every sandbox replaces with its own (and would hide by itself).
    const base = tempDir('forge-seam-', '/var/tmp');
    const [workDir, home, secretsDir] = ['work', 'home', 'secrets'].map((name) => join(base, name));
    try {
      mkdirSync(join(workDir, '.forge', 'sessions'), { recursive: true });
      mkdirSync(secretsDir);
      writeFileSync(join(workDir, '.forge', 'sessions', 'other.json'), 'SESSION-SECRET');
      mkdirSync(join(home, '.ssh'), { recursive: true });
      writeFileSync(join(home, '.ssh', 'id_ed25519'), 'SSH-SECRET');
      writeFileSync(join(secretsDir, 'token'), 'TOKEN-SECRET');
      vi.stubEnv('HOME', home);
      installToolSandbox(probe, { mode: 'auto' }, workDir);
      hideFromTools(join(secretsDir, 'token'));
      const dir = join(workDir, '.forge', 'forged', 'probe');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'code.js'), 'CODE');
      // What a forged tool that got past Node's permission model would run: plain reads, in the same sandbox.
      const paths = [join(dir, 'code.js'), join(workDir, '.forge', 'sessions', 'other.json'), join(home, '.ssh', 'id_ed25519'), join(secretsDir, 'token')];
      const { command, args } = processSandboxSeam('/bin/sh', ['-c', paths.map((p) => `(cat ${p} 2>/dev/null && echo) || echo hidden`).join('; ')], dir);
      expect(command).toBe(probe.bwrap);
      expect(execFileSync(command, args, { encoding: 'utf8' }).split('\n').filter(Boolean)).toEqual(['CODE', 'hidden', 'hidden', 'hidden']);
    } finally {
      vi.unstubAllEnvs();
      uninstallToolSandbox();
    }
  });

  it('stops its idle process once a credential store was made since it started (and not before), and starts one under the mounts of now', async () => {
    const probe = await probeSandbox();
    expect(probe.isolation, probe.reason).toBe('bubblewrap');
    const base = tempDir('forge-late-store-', '/var/tmp');
    const [workDir, home] = ['work', 'home'].map((name) => join(base, name));
    mkdirSync(home, { recursive: true });
    vi.stubEnv('HOME', home);
    installToolSandbox(probe, { mode: 'auto' }, workDir);
    const dir = join(workDir, '.forge', 'forged', 'late');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'code.js'), 'function execute() { return "ran"; }');
    const sandbox = new SandboxProcess(join(dir, 'code.js'), { tools: [], hosts: [] }, { memoryMb: 64, timeoutMs: 10_000 });
    const pause = () => new Promise((resolve) => setTimeout(resolve, 1100)); // the mounts are compared once a second at most
    try {
      expect(await sandbox.call({}, fetchBridge)).toMatchObject({ ok: true, value: 'ran' });
      await pause();
      expect(await sandbox.call({}, fetchBridge)).toMatchObject({ ok: true, value: 'ran' });
      expect(sandbox.starts).toBe(1);
      expect(processesRunning(join(dir, 'code.js')).length).toBeGreaterThan(0);
      writeFileSync(join(home, '.pgpass'), 'db:5432:*:me:hunter2\n'); // made after the process started
      expect(await goneWithin(join(dir, 'code.js'), 5000)).toEqual([]); // no call needed
      expect(await sandbox.call({}, fetchBridge)).toMatchObject({ ok: true, value: 'ran' });
      expect(sandbox.starts).toBe(2);
    } finally {
      await sandbox.close();
      vi.unstubAllEnvs();
      uninstallToolSandbox();
    }
  });

  it('keeps one warm process across calls', async () => {
    const file = join(tempDir(), 'code.js');
    writeFileSync(file, 'let calls = 0; function execute() { return ++calls; }');
    const sandbox = new SandboxProcess(file, { tools: [], hosts: [] }, { memoryMb: 32, timeoutMs: 5000 });
    try {
      for (let i = 1; i <= 5; i++) expect(await sandbox.call({}, fetchBridge)).toMatchObject({ ok: true, value: i });
      expect(sandbox.starts).toBe(1);
    } finally {
      await sandbox.close();
    }
  });

  it('stops a call that is cancelled', async () => {
    const file = join(tempDir(), 'code.js');
    writeFileSync(file, 'function execute() { while (true) {} }');
    const sandbox = new SandboxProcess(file, { tools: [], hosts: [] }, { memoryMb: 32, timeoutMs: 60_000 });
    const controller = new AbortController();
    const running = sandbox.call({}, fetchBridge, controller.signal);
    setTimeout(() => controller.abort(), 200);
    expect(await running).toMatchObject({ ok: false, code: 'FORGE_SANDBOX_CANCELLED' });
    await sandbox.close();
  });
});
