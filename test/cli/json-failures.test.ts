/**
 * Every command that takes --json fails with one shape, so a script or a CI job reads any command's
 * failure the same way: stdout is one JSON document `{ ok: false, error, errors, warnings, ... }`,
 * `error` is the first of `errors`, and each entry is a diagnostic (code, message, hint, where).
 * Run as the real `forge` command and the real bundle; each command's success is one JSON document too.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DIAGNOSTIC_CODES } from '../../runtime/diagnostic-codes.ts';
import { isAlive } from '../helpers/processes.ts';
import { forge, forgeBin, minimalConfig, runProcess, tempDir, writeProject, type ProcessResult } from '../helpers/project.ts';

type Json = Record<string, any>;

const DIAGNOSTIC_KEYS = ['severity', 'code', 'message', 'hint', 'file', 'line', 'column', 'location', 'notes', 'details', 'retryAfterSeconds'];

/** One diagnostic entry: a catalog code, words, an optional hint, and its place both flat and as esbuild's `location`. */
function expectDiagnostic(entry: Json, severity: 'error' | 'warning'): void {
  expect(Object.keys(entry).filter((key) => !DIAGNOSTIC_KEYS.includes(key)), JSON.stringify(entry)).toEqual([]);
  expect(entry.severity).toBe(severity);
  expect(Object.keys(DIAGNOSTIC_CODES)).toContain(entry.code);
  expect(entry.message).toEqual(expect.any(String));
  expect(entry.message).not.toBe('');
  if (entry.hint !== undefined) expect(entry.hint).toEqual(expect.any(String));
  if (entry.file === undefined) expect(entry.location).toBeUndefined();
  else expect(entry.location).toMatchObject({ file: entry.file, ...(entry.line ? { line: entry.line } : {}), ...(entry.column ? { column: entry.column } : {}) });
  for (const note of entry.notes ?? []) expect(note.text).toEqual(expect.any(String));
}

/** The shared checker: the exit code as documented, stdout one JSON document in the failure shape, `error.code` as expected. */
function expectFailure(run: ProcessResult, exitCode: number, code: string): Json {
  expect(run.code, run.stderr).toBe(exitCode);
  const doc = JSON.parse(run.stdout) as Json;
  expect(doc.ok).toBe(false);
  expect(doc.errors.length, run.stdout).toBeGreaterThan(0);
  expect(doc.warnings).toEqual(expect.any(Array));
  expect(doc.error).toEqual(doc.errors[0]);
  expect(doc.error.code).toBe(code);
  for (const entry of doc.errors) expectDiagnostic(entry, 'error');
  for (const entry of doc.warnings) expectDiagnostic(entry, 'warning');
  return doc;
}

/** A success: exit 0 and one JSON document (`ok: true` where the command's answer is an object with `ok`). */
function expectSuccess(run: ProcessResult): Json {
  expect(run.code, run.stderr).toBe(0);
  const doc = JSON.parse(run.stdout) as Json;
  if (!Array.isArray(doc) && 'ok' in doc) expect(doc.ok).toBe(true);
  return doc;
}

const GREET = 'description: Greets someone.\ntags: [read]\nparameters:\n  name: { type: string, description: Who to greet. }\nbash: echo "Hello, {name}!"\n';
const FAILS = 'description: Always fails.\ntags: [read]\nbash: exit 3\n';
const BROKEN_PY = '"""\nTool: broken\nDescription: Broken.\n\nInput:\n  when (strng): When.\n"""\nprint(1)\n';

let dirs: Record<'good' | 'broken' | 'badYaml' | 'empty' | 'mcp' | 'keyless' | 'fresh', string>;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  env = { FORGE_HOME: tempDir('forge-home-'), FORGE_GLOBAL_TOOLS: tempDir('forge-global-'), FORGE_STATE_DIR: tempDir('forge-state-'), FORGE_TEST_NO_SUCH_KEY: '', FORGE_TEST_NO_SUCH_KEY_FILE: join(tempDir('forge-keys-'), 'missing') };
  dirs = {
    good: writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n'), 'tools/greet.yaml': GREET, 'tools/fails.yaml': FAILS }),
    broken: writeProject({ 'forge.yaml': minimalConfig(), 'tools/broken.py': BROKEN_PY }),
    badYaml: writeProject({ 'forge.yaml': 'agent_id: [oops\n' }),
    empty: tempDir('forge-no-project-'),
    mcp: writeProject({ 'forge.yaml': minimalConfig('mcp:\n  servers:\n    - name: dead\n      transport: stdio\n      command: /nonexistent/forge-test-server\n') }),
    keyless: writeProject({ 'forge.yaml': minimalConfig('model:\n  provider: openai\n  name: gpt-4o-mini\n  api_key_env: FORGE_TEST_NO_SUCH_KEY\n') }),
    fresh: tempDir('forge-init-'),
  };
});

const run = (dir: keyof typeof dirs, args: string[]) => forge([...args, '--json'], dirs[dir], env);

interface Case {
  command: string;
  fails: { dir: keyof typeof dirs; args: string[]; exit: number; code: string };
  /** What the README or the command's earlier JSON already had, still there. */
  documented?: (doc: Json) => void;
  succeeds?: { dir: keyof typeof dirs; args: string[] };
}

const CASES: Case[] = [
  {
    command: 'forge build',
    fails: { dir: 'broken', args: ['build'], exit: 1, code: 'FORGE_DOCSTRING_TYPE' },
    documented: (doc) => {
      expect(doc.errors[0]).toMatchObject({ file: 'tools/broken.py', line: 6, column: 9, hint: 'did you mean "string"?', location: { file: 'tools/broken.py', line: 6, column: 9, lineText: '  when (strng): When.' } });
      expect(doc).toMatchObject({ cached: false, timings: expect.any(Array), durationMs: expect.any(Number) });
    },
    succeeds: { dir: 'good', args: ['build'] },
  },
  { command: 'forge build (a usage error)', fails: { dir: 'good', args: ['build', '--bogus'], exit: 2, code: 'FORGE_USAGE' } },
  { command: 'forge validate', fails: { dir: 'broken', args: ['validate'], exit: 1, code: 'FORGE_DOCSTRING_TYPE' }, documented: (doc) => expect(doc.tools).toEqual([]), succeeds: { dir: 'good', args: ['validate'] } },
  { command: 'forge tool list', fails: { dir: 'empty', args: ['tool', 'list'], exit: 1, code: 'FORGE_CONFIG_NOT_FOUND' }, succeeds: { dir: 'good', args: ['tool', 'list'] } },
  { command: 'forge tool list (a usage error)', fails: { dir: 'good', args: ['tool', 'list', '--category', 'nope'], exit: 2, code: 'FORGE_USAGE' } },
  { command: 'forge tool describe', fails: { dir: 'good', args: ['tool', 'describe', 'nope'], exit: 1, code: 'FORGE_TOOL_UNKNOWN' }, succeeds: { dir: 'good', args: ['tool', 'describe', 'greet'] } },
  { command: 'forge tool describe (a file with errors)', fails: { dir: 'broken', args: ['tool', 'describe', 'broken'], exit: 1, code: 'FORGE_DOCSTRING_TYPE' } },
  { command: 'forge tool describe (no name)', fails: { dir: 'good', args: ['tool', 'describe'], exit: 2, code: 'FORGE_USAGE' } },
  {
    command: 'forge tool run (a tool that fails)',
    fails: { dir: 'good', args: ['tool', 'run', 'fails'], exit: 1, code: 'FORGE_YAML_STEP_FAILED' },
    // The README's tool error result: { ok: false, error: { code, message, hint } }, and the call's duration.
    documented: (doc) => expect(doc).toMatchObject({ error: { message: 'tool "fails" failed: exited with code 3' }, durationMs: expect.any(Number) }),
    succeeds: { dir: 'good', args: ['tool', 'run', 'greet', '--param', 'name=Ada'] },
  },
  { command: 'forge tool run (no such tool)', fails: { dir: 'good', args: ['tool', 'run', 'nope'], exit: 1, code: 'FORGE_TOOL_UNKNOWN' }, documented: (doc) => expect(doc.error.hint).toMatch(/fails, greet/) },
  { command: 'forge tool run (a builtin not enabled)', fails: { dir: 'good', args: ['tool', 'run', 'json_parse'], exit: 1, code: 'FORGE_TOOL_UNKNOWN' } },
  { command: 'forge tool run (outside a project)', fails: { dir: 'empty', args: ['tool', 'run', 'nope'], exit: 1, code: 'FORGE_TOOL_UNKNOWN' } },
  { command: 'forge tool run (a file with errors)', fails: { dir: 'broken', args: ['tool', 'run', 'broken'], exit: 1, code: 'FORGE_DOCSTRING_TYPE' } },
  {
    command: 'forge tool run --dry-run',
    fails: { dir: 'good', args: ['tool', 'run', 'greet', '--dry-run'], exit: 1, code: 'FORGE_TOOL_ARGS' },
    documented: (doc) => expect(doc.dryRun).toBe(true),
    succeeds: { dir: 'good', args: ['tool', 'run', 'greet', '--param', 'name=Ada', '--dry-run'] },
  },
  { command: 'forge tool run (a usage error)', fails: { dir: 'good', args: ['tool', 'run', 'greet', '--timeout', 'soon'], exit: 2, code: 'FORGE_USAGE' } },
  { command: 'forge tool check', fails: { dir: 'good', args: ['tool', 'check', 'nope'], exit: 1, code: 'FORGE_TOOL_UNKNOWN' }, succeeds: { dir: 'good', args: ['tool', 'check'] } },
  { command: 'forge tool check (a file with errors)', fails: { dir: 'broken', args: ['tool', 'check', 'broken'], exit: 1, code: 'FORGE_DOCSTRING_TYPE' }, documented: (doc) => expect(doc.diagnostics).toEqual(doc.errors) },
  { command: 'forge tool get', fails: { dir: 'good', args: ['tool', 'get', 'nope'], exit: 1, code: 'FORGE_TOOL_UNKNOWN' }, succeeds: { dir: 'good', args: ['tool', 'get', 'greet'] } },
  { command: 'forge tool remove', fails: { dir: 'good', args: ['tool', 'remove', 'nope'], exit: 1, code: 'FORGE_TOOL_UNKNOWN' } },
  { command: 'forge tool add', fails: { dir: 'good', args: ['tool', 'add', 'greet', '--description', 'Again.', '--bash', 'echo hi'], exit: 1, code: 'FORGE_FILE_EXISTS' } },
  { command: 'forge tool install', fails: { dir: 'good', args: ['tool', 'install', '/nonexistent/forge-tools'], exit: 1, code: 'FORGE_INSTALL_SOURCE' } },
  { command: 'forge tool forged', fails: { dir: 'empty', args: ['tool', 'forged', 'list'], exit: 1, code: 'FORGE_CONFIG_NOT_FOUND' }, succeeds: { dir: 'good', args: ['tool', 'forged', 'list'] } },
  { command: 'forge tool promote', fails: { dir: 'good', args: ['tool', 'promote', 'nope'], exit: 1, code: 'FORGE_TOOL_UNKNOWN' } },
  { command: 'forge init', fails: { dir: 'good', args: ['init'], exit: 1, code: 'FORGE_FILE_EXISTS' }, succeeds: { dir: 'fresh', args: ['init'] } },
  {
    command: 'forge mcp list',
    fails: { dir: 'mcp', args: ['mcp', 'list'], exit: 1, code: 'FORGE_MCP_CONNECT' },
    documented: (doc) => expect(doc.servers).toMatchObject([{ name: 'dead', ok: false, error: { code: 'FORGE_MCP_CONNECT', message: doc.error.message } }]),
    succeeds: { dir: 'good', args: ['mcp', 'list'] },
  },
  { command: 'forge mcp test', fails: { dir: 'mcp', args: ['mcp', 'test', 'dead'], exit: 1, code: 'FORGE_MCP_CONNECT' } },
  { command: 'forge mcp test (no such server)', fails: { dir: 'mcp', args: ['mcp', 'test', 'nope'], exit: 2, code: 'FORGE_USAGE' } },
  {
    command: 'forge doctor',
    // A model key file that is not there (the agent refuses to start on it), with the model key's code, not doctor's catch-all.
    fails: { dir: 'keyless', args: ['doctor'], exit: 1, code: 'FORGE_MODEL_KEY' },
    documented: (doc) => {
      expect(doc.checks).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'model key', ok: false })]));
      expect(doc.error.message).toMatch(/^model key: FORGE_TEST_NO_SUCH_KEY/);
    },
    succeeds: { dir: 'good', args: ['doctor'] },
  },
  { command: 'forge doctor (a forge.yaml that does not parse)', fails: { dir: 'badYaml', args: ['doctor'], exit: 1, code: 'FORGE_YAML_SYNTAX' } },
  { command: 'forge package (a usage error)', fails: { dir: 'good', args: ['package', '--bogus'], exit: 2, code: 'FORGE_USAGE' } },
  { command: 'forge version (a usage error)', fails: { dir: 'good', args: ['version', 'extra'], exit: 2, code: 'FORGE_USAGE' }, succeeds: { dir: 'good', args: ['version'] } },
  { command: 'forge (an unknown command)', fails: { dir: 'good', args: ['frobnicate'], exit: 2, code: 'FORGE_USAGE' } },
];

describe('forge --json failures share one shape', () => {
  it.each(CASES)('$command', async ({ fails, documented, succeeds }) => {
    const doc = expectFailure(await run(fails.dir, fails.args), fails.exit, fails.code);
    documented?.(doc);
    if (succeeds) expectSuccess(await run(succeeds.dir, succeeds.args));
  });

  it('the human text of a usage error stays on stderr, out of the JSON', async () => {
    const result = await run('good', ['build', '--bogus']);
    expectFailure(result, 2, 'FORGE_USAGE');
    expect(result.stderr).toContain('usage: forge build');
  });
});

describe('forge init and forge mcp list succeed with `warnings`, as every command does', () => {
  it('forge init --json: `warnings` (empty: it warns of nothing) beside the files it wrote', async () => {
    const doc = expectSuccess(await forge(['init', '--json'], tempDir('forge-init-'), env));
    expect(doc).toMatchObject({ agent_id: expect.any(String), files: expect.any(Array), warnings: [] });
  });

  it("forge mcp list --json: forge.yaml's warnings are the document's, and stderr stays empty; text mode prints them", async () => {
    const project = writeProject({ 'forge.yaml': 'agent_id: test-agent\nversion: 1.0.0\ndescription: !custom A test agent.\n' });
    const result = await forge(['mcp', 'list', '--json'], project, env);
    const doc = expectSuccess(result);
    expect(doc.servers).toEqual([]);
    expect(doc.warnings).toMatchObject([{ severity: 'warning', code: 'FORGE_YAML_WARNING', file: 'forge.yaml', line: 3 }]);
    for (const entry of doc.warnings) expectDiagnostic(entry, 'warning');
    expect(result.stderr).toBe('');
    const text = await forge(['mcp', 'list'], project, env);
    expect(text.stderr).toContain('FORGE_YAML_WARNING');
  });
});

describe('forge run and forge chat fail to load a project as forge build does', () => {
  // Neither serves: the project does not load. A script reads the same document forge build --json prints.
  it.each([
    { project: 'a forge.yaml that does not parse', dir: 'badYaml', code: 'FORGE_YAML_SYNTAX' },
    { project: 'a tool docstring with an unknown type', dir: 'broken', code: 'FORGE_DOCSTRING_TYPE' },
  ] as { project: string; dir: keyof typeof dirs; code: string }[])('$project', async ({ dir, code }) => {
    const build = expectFailure(await run(dir, ['build']), 1, code);
    for (const command of [['run'], ['chat'], ['run', '--chat']]) {
      const doc = expectFailure(await run(dir, command), 1, code);
      expect({ errors: doc.errors, warnings: doc.warnings }, command.join(' ')).toEqual({ errors: build.errors, warnings: build.warnings });
    }
  }, 60_000);
});

/** A Python tool that says it has started (its process's pid, in the work dir) and then takes far longer than the test waits. */
const SLOW_PY = `"""
Tool: slow
Description: Sleeps.
Tags: read
"""
import os
import time


def execute(args):
    with open("slow.pid.tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename("slow.pid.tmp", "slow.pid")
    time.sleep(600)
    return "woke"
`;

describe('forge tool run --json interrupted', () => {
  // Ctrl-C; a kill, timeout(1) or a CI runner's stop; the terminal closing. Each would end forge by default and leave the worker running.
  it.each([
    { signal: 'SIGINT', exit: 130, how: 'Ctrl-C, SIGINT' },
    { signal: 'SIGTERM', exit: 143, how: 'SIGTERM' },
    { signal: 'SIGHUP', exit: 129, how: 'SIGHUP' },
  ] as { signal: NodeJS.Signals; exit: number; how: string }[])('$signal prints the failure document with FORGE_TOOL_CANCELLED, exits $exit and stops the tool process', async ({ signal: sent, exit, how }) => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/slow.py': SLOW_PY });
    // Unsandboxed, so the pid the tool writes is one this test can see.
    const child = spawn(process.execPath, [forgeBin, 'tool', 'run', 'slow', '--json'], { cwd: project, env: { ...process.env, NO_COLOR: '1', ...env, FORGE_SANDBOX: 'off' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (code, signal) => resolve([code, signal])));
    const pidFile = join(project, 'slow.pid');
    let pid: number | undefined;
    try {
      while (child.exitCode === null && !existsSync(pidFile)) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(existsSync(pidFile), `the tool did not start: ${stderr}`).toBe(true);
      pid = Number(readFileSync(pidFile, 'utf8'));
      expect(isAlive(pid)).toBe(true);
      child.kill(sent);
      const [code, signal] = await exited;
      expect(signal, stderr).toBeNull();
      const doc = expectFailure({ code, stdout, stderr }, exit, 'FORGE_TOOL_CANCELLED');
      expect(doc.error.message).toContain('"slow"');
      expect(doc.error.hint).toContain(`interrupted (${how})`);
      expect(isAlive(pid), 'the tool process outlived forge').toBe(false);
    } finally {
      // A failed run leaves nothing sleeping behind it.
      if (child.exitCode === null) child.kill('SIGKILL');
      if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 60_000);
});

describe('a sandbox that is required and missing is one code wherever it is met', () => {
  // bwrap that cannot make namespaces, and FORGE_SANDBOX=required: every command that would run a tool refuses.
  const refused = { FORGE_BWRAP: '/bin/false', FORGE_SANDBOX: 'required' };

  it('forge tool run (exit 2, as before), forge doctor, and the bundle\'s call and doctor all say FORGE_SANDBOX_REQUIRED', async () => {
    const runWith = (args: string[]) => forge([...args, '--json'], dirs.good, { ...env, ...refused });
    expectFailure(await runWith(['tool', 'run', 'greet', '--param', 'name=Ada']), 2, 'FORGE_SANDBOX_REQUIRED');
    expectFailure(await runWith(['doctor']), 1, 'FORGE_SANDBOX_REQUIRED');
    expect((await forge(['build'], dirs.good, env)).code).toBe(0);
    const bundle = (args: string[]) => runProcess(process.execPath, [join(dirs.good, '.forge-output', 'runtime.mjs'), ...args, '--json'], { cwd: dirs.good, env: { ...env, ...refused } });
    expectFailure(await bundle(['call', 'greet', '{"name": "Ada"}']), 1, 'FORGE_SANDBOX_REQUIRED');
    expectFailure(await bundle(['doctor']), 1, 'FORGE_SANDBOX_REQUIRED');
  }, 120_000);

  it('forge doctor names a missing work dir as the bundle refuses it', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('workdir: ./not-made\n') });
    expectFailure(await forge(['doctor', '--json'], project, env), 1, 'FORGE_WORKDIR_MISSING');
  });

  it('forge doctor and the bundle both refuse a work dir that is a file, in the same words', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('workdir: ./a-file\n'), 'a-file': 'not a directory\n' });
    const doctor = await forge(['doctor', '--json'], project, env);
    expectFailure(doctor, 1, 'FORGE_WORKDIR_MISSING');
    expect(doctor.stdout).toContain('a-file is not a directory');
    const built = await forge(['build'], project, env);
    expect(built.code, built.stderr).toBe(0);
    const call = await runProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'call', 'x', '{}', '--json'], { cwd: project, env });
    expectFailure(call, 1, 'FORGE_WORKDIR_MISSING');
    expect(call.stdout).toContain('a-file is not a directory');
  });
});

describe('node runtime.mjs --json failures share the same shape', () => {
  let bundle: string;
  beforeAll(async () => {
    expect((await forge(['build'], dirs.good, env)).code).toBe(0);
    bundle = join(dirs.good, '.forge-output', 'runtime.mjs');
  }, 120_000);
  const runtime = (args: string[]) => runProcess(process.execPath, [bundle, ...args, '--json'], { cwd: dirs.good, env: { ...env, FORGE_VERBOSE: '' } });

  it.each([
    { command: 'call (a tool that fails)', args: ['call', 'fails'], exit: 1, code: 'FORGE_YAML_STEP_FAILED', succeeds: ['call', 'greet', '{"name": "Ada"}'] },
    { command: 'call (no such tool)', args: ['call', 'nope'], exit: 1, code: 'FORGE_TOOL_UNKNOWN' },
    { command: 'call (arguments that are not JSON)', args: ['call', 'greet', '{name'], exit: 2, code: 'FORGE_USAGE' },
    { command: 'call (an unknown option)', args: ['call', 'greet', '--bogus'], exit: 2, code: 'FORGE_USAGE' },
    { command: 'call (a work dir that is not there)', args: ['call', 'greet', '--workdir', '/nonexistent/forge-work'], exit: 1, code: 'FORGE_WORKDIR_MISSING' },
    { command: 'describe', args: ['describe', 'nope'], exit: 1, code: 'FORGE_TOOL_UNKNOWN', succeeds: ['describe', 'greet'] },
    { command: 'tools (an extra argument)', args: ['tools', 'extra'], exit: 2, code: 'FORGE_USAGE', succeeds: ['tools'] },
    { command: 'doctor (an extra argument)', args: ['doctor', 'extra'], exit: 2, code: 'FORGE_USAGE', succeeds: ['doctor'] },
    { command: 'an unknown command', args: ['frobnicate'], exit: 2, code: 'FORGE_USAGE' },
  ] as { command: string; args: string[]; exit: number; code: string; succeeds?: string[] }[])('$command', async ({ args, exit, code, succeeds }) => {
    const doc = expectFailure(await runtime(args), exit, code);
    // A failed call keeps the tool error result the README documents, and its duration.
    if (args[0] === 'call' && exit === 1 && code !== 'FORGE_WORKDIR_MISSING') expect(doc).toMatchObject({ error: { code, message: expect.any(String) }, durationMs: expect.any(Number) });
    if (succeeds) expectSuccess(await runtime(succeeds));
  });
});
