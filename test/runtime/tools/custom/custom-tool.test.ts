import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCustomTool } from '../../../../runtime/tools/custom/custom-tool.ts';
import type { ToolResult } from '../../../../runtime/tools/model.ts';
import { ToolRegistry } from '../../../../runtime/tools/registry.ts';
import { parseToolFile } from '../../../../stages/parse-docstrings.ts';
import { createSourceNodeLauncher } from '../../../../stages/source-node-launcher.ts';
import { tempDir } from '../../../helpers/project.ts';

const registries: ToolRegistry[] = [];
afterEach(async () => {
  await Promise.all(registries.splice(0).map((r) => r.close()));
});

/** Writes `files` into a fresh work dir and registers the tool declared in the first one. */
function project(files: Record<string, string>, options: { passthrough?: string[] } = {}) {
  const dir = tempDir('forge-custom-');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const registry = new ToolRegistry({ workDir: dir });
  registries.push(registry);
  for (const name of Object.keys(files)) {
    const kind = name.endsWith('.py') ? 'python' : name.endsWith('.ts') ? 'typescript' : 'javascript';
    const { spec, diagnostics } = parseToolFile({ absolute: join(dir, name), relative: name, display: name, kind });
    if (!spec) continue;
    if (diagnostics.length) throw new Error(JSON.stringify(diagnostics));
    const tool = createCustomTool(spec, {
      workDir: dir,
      envPassthrough: options.passthrough,
      resolveSource: (p) => join(dir, p),
      node: createSourceNodeLauncher(dir),
      maxOutputBytes: 64 * 1024,
    });
    registry.register(tool, name);
  }
  return { dir, registry };
}

const py = (name: string, body: string, header = '') => `"""\nTool: ${name}\nDescription: test tool.\n${header}"""\n${body}\n`;
const ts = (name: string, body: string, header = '') => `/**\n * Tool: ${name}\n * Description: test tool.\n${header}*/\n${body}\n`;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntilDead(pid: number, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return !isAlive(pid);
}

function expectError(result: ToolResult, code: string): string {
  expect(result.ok, JSON.stringify(result)).toBe(false);
  if (result.ok) return '';
  expect(result.error.code).toBe(code);
  return result.error.message;
}

// A tool that starts a grandchild (`sleep`), records its pid, then hangs.
const SPAWNS_GRANDCHILD_PY = `
import json, subprocess, sys, time
child = subprocess.Popen(["sleep", "60"])
open("grandchild.pid", "w").write(str(child.pid))
time.sleep(60)
`;

describe('script-style tools (one process per call)', () => {
  it('passes JSON on stdin and parses JSON from stdout when the tool declares an Output', async () => {
    const { registry } = project({ 'add.py': py('add', 'import json, sys\na = json.load(sys.stdin)\nprint(json.dumps({"sum": a["a"] + a["b"]}))', 'Input:\n  a (int): A.\n  b (int): B.\nOutput:\n  sum (int): The sum.\n') });
    expect(await registry.execute('add', { a: 2, b: 3 })).toMatchObject({ ok: true, value: { sum: 5 } });
  });

  it('returns plain text output as a string', async () => {
    const { registry } = project({ 'hello.py': py('hello', 'print("hello, world")') });
    expect(await registry.execute('hello', {})).toMatchObject({ ok: true, value: 'hello, world' });
  });

  it('runs in the work dir with HOME set to it', async () => {
    const { dir, registry } = project({ 'where.py': py('where', 'import json, os\nprint(json.dumps({"cwd": os.getcwd(), "home": os.environ["HOME"]}))', 'Output:\n  cwd (str): Where.\n  home (str): HOME.\n') });
    expect(await registry.execute('where', {})).toMatchObject({ ok: true, value: { cwd: dir, home: dir } });
  });

  it('does not leak a secret variable from the parent environment', async () => {
    process.env.FORGE_TEST_SECRET = 'sk-should-not-leak';
    process.env.FORGE_TEST_ALLOWED = 'passed-through';
    try {
      const { registry } = project({ 'env.py': py('env', 'import json, os\nprint(json.dumps(dict(os.environ)))') }, { passthrough: ['FORGE_TEST_ALLOWED'] });
      const result = await registry.execute('env', {});
      expect(result.ok).toBe(true);
      const env = JSON.parse((result as { value: string }).value) as Record<string, string>;
      expect(JSON.stringify(env)).not.toContain('sk-should-not-leak');
      expect(env.FORGE_TEST_ALLOWED).toBe('passed-through');
      expect(Object.keys(env).filter((k) => !['PATH', 'LANG', 'HOME', 'FORGE_TEST_ALLOWED', 'PYTHONDONTWRITEBYTECODE', 'PYTHONUNBUFFERED', 'LC_CTYPE'].includes(k))).toEqual([]);
    } finally {
      delete process.env.FORGE_TEST_SECRET;
      delete process.env.FORGE_TEST_ALLOWED;
    }
  });

  it('turns a non-zero exit into an error carrying the tail of stderr', async () => {
    const { registry } = project({ 'crash.py': py('crash', 'import sys\nsys.stderr.write("noise\\n" * 500)\nsys.stderr.write("the real reason\\n")\nsys.exit(3)') });
    const message = expectError(await registry.execute('crash', {}), 'FORGE_TOOL_EXIT');
    expect(message).toContain('exited with code 3');
    expect(message).toContain('the real reason');
    expect(message.length).toBeLessThan(2000);
  });

  it('reports an uncaught exception with its traceback', async () => {
    const { registry } = project({ 'raise.py': py('raise', 'raise ValueError("bad input")') });
    expect(expectError(await registry.execute('raise', {}), 'FORGE_TOOL_EXIT')).toContain('ValueError: bad input');
  });

  it('kills the whole process tree on timeout, grandchildren included', async () => {
    const { dir, registry } = project({ 'hang.py': py('hang', SPAWNS_GRANDCHILD_PY, 'Timeout: 1500ms\n') });
    const result = await registry.execute('hang', {});
    expectError(result, 'FORGE_TOOL_TIMEOUT');
    const grandchild = Number(readFileSync(join(dir, 'grandchild.pid'), 'utf8'));
    expect(await waitUntilDead(grandchild)).toBe(true);
  });

  it('stops a tool that floods stdout, long before its timeout', async () => {
    const { registry } = project({ 'flood.py': py('flood', 'import sys\nwhile True:\n    sys.stdout.write("x" * 65536)', 'Timeout: 30s\n') });
    const started = Date.now();
    expect(expectError(await registry.execute('flood', {}), 'FORGE_TOOL_OUTPUT_LIMIT')).toContain('64 KiB');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('caps stderr and keeps its tail', async () => {
    const { registry } = project({ 'loud.py': py('loud', 'import sys\nfor i in range(200000):\n    sys.stderr.write("line %d\\n" % i)\nsys.exit(1)') });
    const result = await registry.execute('loud', {});
    const message = expectError(result, 'FORGE_TOOL_EXIT');
    expect(message).toContain('line 199999');
    expect(message).not.toContain('line 0\n');
    expect((result as { error: { details?: string } }).error.details!.length).toBeLessThanOrEqual(64 * 1024);
  });

  it('runs a TypeScript script tool compiled by esbuild', async () => {
    const body = "let s = '';\nprocess.stdin.on('data', (c) => (s += c));\nprocess.stdin.on('end', () => { const a = JSON.parse(s) as { n: number }; console.log(JSON.stringify({ doubled: a.n * 2 })); });";
    const { registry } = project({ 'double.ts': ts('double', body, ' * Input:\n *   n (int): N.\n * Output:\n *   doubled (int): Twice n.\n') });
    expect(await registry.execute('double', { n: 21 })).toMatchObject({ ok: true, value: { doubled: 42 } });
  });
});

describe('execute-style tools (long-lived worker)', () => {
  const PID_PY = py('pid', 'import os\n\ndef execute(args):\n    print("chatter on stdout must not break the protocol")\n    return {"pid": os.getpid(), "echo": args.get("x")}', 'Input:\n  x (any, optional): X.\n');

  it('serves warm calls from one worker process', async () => {
    const { registry } = project({ 'pid.py': PID_PY });
    const first = await registry.execute('pid', { x: 1 });
    const second = await registry.execute('pid', { x: [1, 'two'] });
    expect(first).toMatchObject({ ok: true, value: { echo: 1 } });
    expect(second).toMatchObject({ ok: true, value: { echo: [1, 'two'] } });
    expect((first as { value: { pid: number } }).value.pid).toBe((second as { value: { pid: number } }).value.pid);
  });

  it('restarts a worker that died, on the next call', async () => {
    const { registry } = project({ 'pid.py': PID_PY });
    const first = (await registry.execute('pid', {})) as { value: { pid: number } };
    process.kill(first.value.pid, 'SIGKILL');
    await waitUntilDead(first.value.pid);
    const second = (await registry.execute('pid', {})) as { ok: boolean; value: { pid: number } };
    expect(second.ok).toBe(true);
    expect(second.value.pid).not.toBe(first.value.pid);
  });

  it('reports a worker that crashes during a call, then recovers', async () => {
    const body = 'import os, sys\n\ndef execute(args):\n    if args.get("die"):\n        sys.stderr.write("dying now\\n"); sys.stderr.flush()\n        os._exit(7)\n    return "alive"';
    const { registry } = project({ 'fragile.py': py('fragile', body, 'Input:\n  die (bool, optional): Crash.\n') });
    const message = expectError(await registry.execute('fragile', { die: true }), 'FORGE_TOOL_CRASHED');
    expect(message).toContain('exited with code 7');
    expect(message).toContain('dying now');
    expect(await registry.execute('fragile', {})).toMatchObject({ ok: true, value: 'alive' });
  });

  it('returns an exception as an error with its type, and keeps serving', async () => {
    const body = 'def execute(args):\n    if args.get("bad"):\n        raise ValueError("city must not be empty")\n    return 1';
    const { registry } = project({ 'strict.py': py('strict', body, 'Input:\n  bad (bool, optional): Fail.\n') });
    const result = await registry.execute('strict', { bad: true });
    expect(expectError(result, 'FORGE_TOOL_FAILED')).toContain('ValueError: city must not be empty');
    expect((result as { error: { details?: string } }).error.details).toContain('Traceback');
    expect(await registry.execute('strict', {})).toMatchObject({ ok: true, value: 1 });
  });

  it('returns dates, UUIDs, decimals and paths as their text, and fails a value JSON has no form for instead of its repr', async () => {
    const body = 'import datetime, decimal, enum, pathlib, uuid\n\nclass Stamp(datetime.datetime):\n    pass\n\nclass Color(enum.Enum):\n    RED = "red"\n\nclass Thing:\n    pass\n\ndef execute(args):\n    if args.get("kind") == "set":\n        return {"s": {1, 2}}\n    if args.get("kind") == "bytes":\n        return {"b": b"abc"}\n    if args.get("kind") == "object":\n        return {"o": Thing()}\n    return {"d": datetime.date(2026, 11, 27), "t": datetime.datetime(2026, 11, 27, 9, 30), "sub": Stamp(2026, 1, 2), "u": uuid.UUID(int=1), "n": decimal.Decimal("1.10"), "p": pathlib.PurePosixPath("/a/b"), "e": Color.RED}';
    const { registry } = project({ 'shapes.py': py('shapes', body, 'Input:\n  kind (str, optional): What to return.\n') });
    expect(await registry.execute('shapes', {})).toMatchObject({ ok: true, value: { d: '2026-11-27', t: '2026-11-27T09:30:00', sub: '2026-01-02T00:00:00', u: '00000000-0000-0000-0000-000000000001', n: '1.10', p: '/a/b', e: 'red' } });
    expect(expectError(await registry.execute('shapes', { kind: 'object' }), 'FORGE_TOOL_FAILED')).toContain('a forge_tool.Thing has no JSON form');
    expect(expectError(await registry.execute('shapes', { kind: 'set' }), 'FORGE_TOOL_FAILED')).toContain('result is not JSON serializable: a set has no JSON form');
    expect(expectError(await registry.execute('shapes', { kind: 'bytes' }), 'FORGE_TOOL_FAILED')).toContain('a bytes has no JSON form');
    // And the worker serves on.
    expect(await registry.execute('shapes', {})).toMatchObject({ ok: true });
  });

  it('supports async def execute', async () => {
    const body = 'import asyncio\n\nasync def execute(args):\n    await asyncio.sleep(0.01)\n    return {"done": True}';
    const { registry } = project({ 'later.py': py('later', body) });
    expect(await registry.execute('later', {})).toMatchObject({ ok: true, value: { done: true } });
  });

  it('runs an async execute whose module never imports asyncio (the worker imports it on first need)', async () => {
    const { registry } = project({ 'plain_async.py': py('plain_async', 'async def execute(args):\n    return {"n": 1}') });
    expect(await registry.execute('plain_async', {})).toMatchObject({ ok: true, value: { n: 1 } });
  });

  it('starts a Python worker without running asyncio, inspect or traceback (about 40 ms of every start)', async () => {
    // What each of them loads when it runs (the names themselves are bound from the start, lazily).
    const heavy = ['asyncio.base_events', 'dis', 'tokenize', 'textwrap'];
    const body = `import sys\nLOADED = sorted(m for m in ${JSON.stringify(heavy)} if m in sys.modules)\n\ndef execute(args):\n    return {"loaded": LOADED, "python": sys.executable}`;
    const { registry } = project({ 'modules.py': py('modules', body) });
    const result = (await registry.execute('modules', {})) as { ok: true; value: { loaded: string[]; python: string } };
    expect(result.ok).toBe(true);
    // What the interpreter's own start (site, .pth files) loads is not the worker's doing.
    const bare: string[] = JSON.parse(execFileSync(result.value.python, ['-c', `import json, sys; print(json.dumps(sorted(m for m in ${JSON.stringify(heavy)} if m in sys.modules)))`], { encoding: 'utf8' }));
    expect(result.value.loaded.filter((name) => !bare.includes(name))).toEqual([]);
  });

  it('uses the standard library\'s modules even with files of their names in the work dir and the tool\'s folder', async () => {
    const shadow = 'raise ImportError("the tool folder\'s own module was imported by the worker host")\n';
    const { registry } = project({
      'later.py': py('later', 'async def execute(args):\n    return {"n": 2}'),
      'broken.py': py('broken', 'def execute(args):\n    raise ValueError("it broke")'),
      'asyncio.py': shadow,
      'inspect.py': shadow,
      'traceback.py': shadow,
      'json.py': shadow,
    });
    expect(await registry.execute('later', {})).toMatchObject({ ok: true, value: { n: 2 } });
    const failed = await registry.execute('broken', {});
    expect(expectError(failed, 'FORGE_TOOL_FAILED')).toContain('ValueError: it broke');
    expect((failed as { error: { details?: string } }).error.details).toContain('Traceback');
  });

  it('kills the worker tree on timeout and starts a fresh worker next time', async () => {
    const body = `import os, subprocess, time\n\ndef execute(args):\n    if args.get("hang"):\n        child = subprocess.Popen(["sleep", "60"])\n        open("grandchild.pid", "w").write(str(child.pid))\n        time.sleep(60)\n    return os.getpid()`;
    const { dir, registry } = project({ 'slow.py': py('slow', body, 'Timeout: 1500ms\nInput:\n  hang (bool, optional): Hang.\n') });
    const before = (await registry.execute('slow', {})) as { value: number };
    expectError(await registry.execute('slow', { hang: true }), 'FORGE_TOOL_TIMEOUT');
    expect(await waitUntilDead(Number(readFileSync(join(dir, 'grandchild.pid'), 'utf8')))).toBe(true);
    expect(await waitUntilDead(before.value)).toBe(true);
    const after = (await registry.execute('slow', {})) as { ok: boolean; value: number };
    expect(after.ok).toBe(true);
    expect(after.value).not.toBe(before.value);
  });

  it('stops a worker whose result is over the output limit', async () => {
    const { registry } = project({ 'huge.py': py('huge', 'def execute(args):\n    return "x" * (5 * 1024 * 1024)') });
    expectError(await registry.execute('huge', {}), 'FORGE_TOOL_OUTPUT_LIMIT');
  });

  it('reports a module that fails to import as an error, not a hang', async () => {
    const { registry } = project({ 'broken.py': py('broken', 'import does_not_exist_anywhere\n\ndef execute(args):\n    return 1') });
    expect(expectError(await registry.execute('broken', {}), 'FORGE_TOOL_FAILED')).toContain('does_not_exist_anywhere');
  });

  it('runs a TypeScript tool that exports execute in a worker', async () => {
    const body = 'export async function execute(args: { n: number }) {\n  console.log("chatter");\n  return { pid: process.pid, squared: args.n ** 2 };\n}';
    const { registry } = project({ 'square.ts': ts('square', body, ' * Input:\n *   n (int): N.\n') });
    const a = (await registry.execute('square', { n: 7 })) as { ok: boolean; value: { pid: number; squared: number } };
    const b = (await registry.execute('square', { n: 3 })) as { ok: boolean; value: { pid: number; squared: number } };
    expect(a).toMatchObject({ ok: true, value: { squared: 49 } });
    expect(b.value.squared).toBe(9);
    expect(a.value.pid).toBe(b.value.pid);
  });

  it('returns a thrown TypeScript error as an error result', async () => {
    const { registry } = project({ 'nope.ts': ts('nope', 'export function execute() {\n  throw new RangeError("out of range");\n}') });
    expect(expectError(await registry.execute('nope', {}), 'FORGE_TOOL_FAILED')).toContain('RangeError: out of range');
  });

  it('reports a missing interpreter clearly', async () => {
    process.env.FORGE_PYTHON = '/nonexistent/python3';
    try {
      const { registry } = project({ 'p.py': py('p', 'def execute(args):\n    return 1') });
      expect(expectError(await registry.execute('p', {}), 'FORGE_PYTHON_MISSING')).toContain('FORGE_PYTHON');
    } finally {
      delete process.env.FORGE_PYTHON;
    }
  });
});
