import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { detectTestCommand } from '../../../../runtime/tools/dev/test-runner.ts';
import { isAlive } from '../../../helpers/processes.ts';
import { tempDir } from '../../../helpers/project.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

function writeFiles(root: string, files: Record<string, string>) {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

let base: string;
let work: string;
let t: ToolHarness;
const env = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', VISIBLE: 'yes', SECRET_KEY: 'hidden' };

beforeAll(async () => {
  base = tempDir('forge-dev-');
  work = join(base, 'work');
  writeFiles(work, { 'notes.md': '# Notes\n', 'src/app.ts': 'export {};\n', '.env.example': 'A=1\n' });
  writeFiles(base, { 'outside/secret.txt': 'secret' });
  symlinkSync(join(base, 'outside'), join(work, 'escape'));
  t = await tools(['local_shell', 'local_file_browser', 'debug_console', 'file_read'], {
    workDir: work,
    env,
    config: { local_shell: { env_passthrough: ['VISIBLE'], timeout: 10, max_output_bytes: 2048 } },
    agentConfig: { agent_id: 'dev-agent', model: { provider: 'openai', name: 'gpt-4o-mini', api_key_env: 'OPENAI_API_KEY' } },
  });
});

interface ShellValue {
  exit_code: number;
  stdout: string;
  stderr: string;
  stdout_truncated: boolean;
}

describe('local_shell', () => {
  it('runs a command line with pipes and redirects in the work dir', async () => {
    const value = await t.value<ShellValue>('local_shell', { command: 'pwd; printf "b\\na\\n" | sort > sorted.txt; cat sorted.txt; echo oops >&2; exit 4' });
    expect(value.stdout).toBe(`${realpathSync(work)}\na\nb\n`);
    expect(value.stderr).toBe('oops\n');
    expect(value.exit_code).toBe(4);
  });

  it('passes only the named variables (no secrets)', async () => {
    const value = await t.value<ShellValue>('local_shell', { command: 'echo "$VISIBLE:$SECRET_KEY"' });
    expect(value.stdout).toBe('yes:\n');
  });

  it('caps the output', async () => {
    const value = await t.value<ShellValue>('local_shell', { command: 'yes | head -c 100000' });
    expect(value.stdout).toHaveLength(2048);
    expect(value.stdout_truncated).toBe(true);
  });

  it('stops a command at its timeout, with its background children', async () => {
    const result = await t.call('local_shell', { command: 'sleep 30 & echo $! > bg.pid; wait', timeout: 0.5 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_SHELL_TIMEOUT' } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(isAlive(Number(readFileSync(join(work, 'bg.pid'), 'utf8')))).toBe(false);
  });

  it('refuses a timeout above the configured one', async () => {
    expect(await t.call('local_shell', { command: 'true', timeout: 60 })).toMatchObject({ ok: false, error: { code: 'FORGE_SHELL_TIMEOUT_LIMIT' } });
  });
});

describe('local_file_browser', () => {
  it('lists a directory with hidden entries and symlinks', async () => {
    const value = await t.value<{ entries: { name: string; type: string }[] }>('local_file_browser', { action: 'list' });
    expect(value.entries.map((e) => `${e.name}:${e.type}`)).toEqual(expect.arrayContaining(['.env.example:file', 'escape:symlink', 'notes.md:file', 'src:directory']));
  });

  it('reads a file, cut at max_bytes', async () => {
    expect(await t.value('local_file_browser', { action: 'read', path: 'notes.md' })).toMatchObject({ content: '# Notes\n', truncated: false });
    expect(await t.value('local_file_browser', { action: 'read', path: 'notes.md', max_bytes: 3 })).toMatchObject({ content: '# N', truncated: true, size: 8 });
  });

  it.each([
    [{ action: 'read', path: 'escape/secret.txt' }, 'FORGE_PATH_OUTSIDE'],
    [{ action: 'list', path: 'escape' }, 'FORGE_PATH_OUTSIDE'],
    [{ action: 'list', path: '..' }, 'FORGE_PATH_OUTSIDE'],
    [{ action: 'read', path: 'src' }, 'FORGE_FILE_IS_DIRECTORY'],
    [{ action: 'list', path: 'notes.md' }, 'FORGE_FILE_NOT_DIRECTORY'],
  ])('refuses %j with %s', async (args, code) => {
    expect(await t.call('local_file_browser', args)).toMatchObject({ ok: false, error: { code } });
  });
});

describe('debug_console', () => {
  it('shows the registered tools with their categories', async () => {
    const { tools: listed } = await t.value<{ tools: { name: string; category: string }[] }>('debug_console', { section: 'tools' });
    expect(listed.map((x) => `${x.name}:${x.category}`)).toEqual(['debug_console:dev', 'file_read:builtin', 'local_file_browser:dev', 'local_shell:dev']);
  });

  it('shows recent calls, newest first, with durations and errors', async () => {
    await t.call('file_read', { path: 'notes.md' });
    await t.call('file_read', { path: 'missing.md' });
    const { calls } = await t.value<{ calls: { name: string; ok: boolean; durationMs: number; args: string; error?: { code: string } }[] }>('debug_console', { section: 'calls', tool: 'file_read', limit: 2 });
    expect(calls).toEqual([
      expect.objectContaining({ name: 'file_read', ok: false, args: '{"path":"missing.md"}', error: expect.objectContaining({ code: 'FORGE_FILE_NOT_FOUND' }), durationMs: expect.any(Number) }),
      expect.objectContaining({ name: 'file_read', ok: true, args: '{"path":"notes.md"}' }),
    ]);
    const { calls: failedOnly } = await t.value<{ calls: { ok: boolean }[] }>('debug_console', { section: 'calls', failed: true });
    expect(failedOnly.length).toBeGreaterThan(0);
    expect(failedOnly.every((c) => !c.ok)).toBe(true);
  });

  it("shows a session only the tools it can call and its own calls, never another session's forged tool or arguments", async () => {
    const registry = t.registry;
    registry.register({ name: 'their_tool', description: 'SECRET of session A.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => ({ ok: true, value: 'a' }), forged: { tier: 'session', owner: 'mcp:a' } } as never, 'forged:their_tool');
    try {
      expect(await registry.execute('their_tool', { secret: 'A-ONLY' }, { session: 'mcp:a' })).toMatchObject({ ok: true });
      await registry.execute('file_read', { path: 'notes.md', from: 'A-ALSO' }, { session: 'mcp:a' });
      await registry.execute('file_read', { path: 'notes.md' }, { session: 'mcp:b' });
      const asB = async (args: unknown) => JSON.stringify(await registry.execute('debug_console', args, { session: 'mcp:b' }));
      for (const args of [{ section: 'tools' }, { section: 'calls', limit: 200 }, { section: 'calls', tool: 'their_tool' }, {}]) {
        const seen = await asB(args);
        expect(seen).toContain('"ok":true');
        // Its name only where B itself asked for it (in B's own calls' arguments, escaped there).
        expect(seen).not.toMatch(/(?<!\\)"their_tool"|SECRET|A-ONLY|A-ALSO/);
      }
      expect(await asB({ section: 'calls', tool: 'file_read' })).toContain('"args":"{\\"path\\":\\"notes.md\\"}"');
      // The owner is shown its tool and its calls.
      const asA = JSON.stringify(await registry.execute('debug_console', { section: 'calls', tool: 'their_tool' }, { session: 'mcp:a' }));
      expect(asA).toContain('A-ONLY');
      expect(JSON.stringify(await registry.execute('debug_console', { section: 'tools' }, { session: 'mcp:a' }))).toContain('their_tool');
    } finally {
      registry.unregister('their_tool');
    }
  });

  it('sums up tools per category and calls, and shows the config', async () => {
    const summary = await t.value<{ tools: Record<string, string[]>; calls: { recorded: number; failed: number } }>('debug_console');
    expect(summary.tools).toEqual({ builtin: ['file_read'], adapter: [], dev: ['debug_console', 'local_file_browser', 'local_shell'], custom: [] });
    expect(summary.calls.recorded).toBeGreaterThan(0);
    expect(await t.value('debug_console', { section: 'config' })).toEqual({ config: { agent_id: 'dev-agent', model: { provider: 'openai', name: 'gpt-4o-mini', api_key_env: 'OPENAI_API_KEY' } } });
  });
});

describe('test_runner', () => {
  const nodeProject = {
    'package.json': JSON.stringify({ name: 'p', private: true, scripts: { test: 'node --test' } }),
    'test/math.test.mjs': "import test from 'node:test';\nimport assert from 'node:assert';\ntest('adds', () => assert.equal(1 + 1, 2));\ntest('subtracts', () => assert.equal(2 - 1, 1));\n",
    'test/broken.test.mjs': "import test from 'node:test';\nimport assert from 'node:assert';\ntest('broken', () => assert.equal(1, 2));\n",
  };

  it('detects npm test, runs it and reports a failing run with counts', async () => {
    const dir = tempDir('forge-tests-node-');
    writeFiles(dir, nodeProject);
    const runner = await tools(['test_runner'], { workDir: dir, env });
    const value = await runner.value<{ passed: boolean; exit_code: number; command: string; summary: Record<string, unknown>; output: string }>('test_runner');
    expect(value).toMatchObject({ passed: false, command: 'npm test', summary: { passed: 2, failed: 1, skipped: 0, format: 'node:test' } });
    expect(value.exit_code).not.toBe(0);
    expect(value.output).toContain('broken');
  });

  it('appends args, quoted, to run a subset (here: only passing tests)', async () => {
    const dir = tempDir('forge-tests-node-');
    writeFiles(dir, nodeProject);
    const runner = await tools(['test_runner'], { workDir: dir, env, config: { test_runner: { command: 'node --test' } } });
    const value = await runner.value('test_runner', { args: ['test/math.test.mjs'] });
    expect(value).toMatchObject({ passed: true, exit_code: 0, command: 'node --test test/math.test.mjs', summary: { passed: 2, failed: 0 } });
  });

  it('runs a configured Python command (unittest) and reads its summary', async () => {
    const dir = tempDir('forge-tests-py-');
    writeFiles(dir, {
      'test_things.py': 'import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n\n    def test_bad(self):\n        self.assertEqual(1, 2)\n\n    @unittest.skip("later")\n    def test_later(self):\n        pass\n',
    });
    const runner = await tools(['test_runner'], { workDir: dir, env, config: { test_runner: { command: 'python3 -m unittest' } } });
    expect(await runner.value('test_runner')).toMatchObject({ passed: false, exit_code: 1, summary: { passed: 1, failed: 1, skipped: 1, format: 'unittest' } });
  });

  it('says when there is no test command to run', async () => {
    const runner = await tools(['test_runner'], { workDir: tempDir(), env });
    expect(await runner.call('test_runner')).toMatchObject({ ok: false, error: { code: 'FORGE_TEST_COMMAND', hint: expect.stringContaining('config.command') } });
  });

  it('stops a run at its timeout', async () => {
    const runner = await tools(['test_runner'], { workDir: tempDir(), env, config: { test_runner: { command: 'sleep 20' } } });
    expect(await runner.call('test_runner', { timeout: 0.5 })).toMatchObject({ ok: false, error: { code: 'FORGE_TEST_TIMEOUT' } });
  });

  it.each([
    [{ 'package.json': '{"scripts":{"test":"vitest run"}}' }, 'npm test'],
    [{ 'package.json': '{"scripts":{"test":"echo \\"Error: no test specified\\" && exit 1"}}' }, undefined],
    [{ 'pytest.ini': '' }, 'python3 -m pytest'],
    [{ 'go.mod': 'module x' }, 'go test ./...'],
    [{ 'Cargo.toml': '[package]' }, 'cargo test'],
    [{ Makefile: 'build:\n\ttrue\ntest: build\n\ttrue\n' }, 'make test'],
    [{ Makefile: 'build:\n\ttrue\n' }, undefined],
  ])('detects the test command of %j', (files, command) => {
    const dir = tempDir();
    writeFiles(dir, files);
    expect(detectTestCommand(dir)).toBe(command);
  });
});
