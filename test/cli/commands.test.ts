import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fixtureProject, forge, repoRoot, tempDir, writeProject, minimalConfig } from '../helpers/project.ts';

describe('forge (usage)', () => {
  it('prints help and exits 0 for --help, 2 with no command', async () => {
    const dir = tempDir();
    const help = await forge(['--help'], dir);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: forge <command>');
    const none = await forge([], dir);
    expect(none.code).toBe(2);
  });

  it('exits 2 for an unknown command, with a suggestion', async () => {
    const { code, stderr } = await forge(['biuld'], tempDir());
    expect(code).toBe(2);
    expect(stderr).toContain('unknown command "biuld" (did you mean "build"?)');
  });

  it('exits 2 for a command named like a property every object has, not with a crash', async () => {
    const { code, stderr } = await forge(['constructor'], tempDir());
    expect(code).toBe(2);
    expect(stderr.startsWith('error: unknown command "constructor"\n')).toBe(true);
  });

  it('exits 2 for a --port past 65535 before anything starts', async () => {
    const { code, stderr } = await forge(['run', '--port', '99999'], fixtureProject('basic'));
    expect(code).toBe(2);
    expect(stderr.startsWith('error: --port must be at most 65535, got 99999\n')).toBe(true);
  });

  it('exits 2 for an unknown option, with a suggestion', async () => {
    const { code, stderr } = await forge(['build', '--prdo'], tempDir());
    expect(code).toBe(2);
    expect(stderr).toContain('unknown option --prdo (did you mean "--prod"?)');
    // The synopsis and where the rest is: the whole usage would push the error off a small screen.
    expect(stderr).toContain('\n\nusage: forge build [--prod]');
    expect(stderr.endsWith('\n\nfor more, run: forge build --help\n')).toBe(true);
    expect(stderr).not.toContain('examples:');
    const sub = await forge(['tool', 'describe', 'a', 'b'], tempDir());
    expect(sub.stderr.endsWith('\n\nusage: forge tool describe NAME [--json]\n\nfor more, run: forge tool describe --help\n')).toBe(true);
  });

  it.each([
    [['tool'], 'error: missing subcommand (subcommands: list, describe, run, add, get, remove, promote, forged, check, install)\n'],
    [['mcp', 'zzz'], 'error: unknown subcommand "zzz" (subcommands: list, test)\n'],
    [['tool', 'lst'], 'error: unknown subcommand "lst" (did you mean "list"?)\n'],
    [['tool', 'toString'], 'error: unknown subcommand "toString" (subcommands: list, describe, run, add, get, remove, promote, forged, check, install)\n'],
  ])('names the subcommands when none, or none it knows, is given: forge %j', async (args, said) => {
    const { code, stderr } = await forge(args, tempDir());
    expect(code).toBe(2);
    expect(stderr.startsWith(said)).toBe(true);
  });

  it('names every option a command describes in its synopsis (or says [options])', async () => {
    const incomplete: string[] = [];
    for (const file of readdirSync(join(repoRoot, 'cli', 'commands')).filter((f) => f.endsWith('.ts'))) {
      const module: Record<string, unknown> = await import(pathToFileURL(join(repoRoot, 'cli', 'commands', file)).href);
      for (const usage of Object.values(module).filter((v): v is string => typeof v === 'string' && v.startsWith('usage: '))) {
        const synopsis = usage.split('\n\n')[0];
        const options = usage.split('\noptions:\n')[1]?.split('\n\n')[0] ?? '';
        const missing = [...options.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]).filter((flag) => !new RegExp(`${flag}\\b`).test(synopsis));
        if (missing.length && !synopsis.includes('[options]')) incomplete.push(`${synopsis.split(' [')[0]}: ${missing.join(' ')}`);
      }
    }
    expect(incomplete).toEqual([]);
    // The synopsis a usage error shows is the same text.
    const { code, stderr } = await forge(['run', '--port', 'x'], tempDir());
    expect(code).toBe(2);
    expect(stderr).toContain('[--public-url URL]\n                 [--log-format text|json] [--stdio] [--chat]\n\nfor more, run: forge run --help');
  });

  it.each([['tool', 'add'], ['tool', 'run'], ['mcp', 'test'], ['mcp', 'list']])('prints %s %s --help as that subcommand\'s usage, not its parent\'s', async (parent, sub) => {
    const { code, stdout } = await forge([parent, sub, '--help'], tempDir());
    expect(code).toBe(0);
    expect(stdout.startsWith(`usage: forge ${parent} ${sub}`)).toBe(true);
  });

  it.each([
    [['build', 'tools/'], 'unexpected argument "tools/"', 'the command takes no arguments besides its options'],
    [['build', '--prod', 'extra'], 'unexpected argument "extra"', 'the command takes no arguments besides its options'],
    [['tool', 'list', 'extra'], 'unexpected argument "extra"', 'the command takes no arguments besides its options'],
    [['tool', 'describe', 'echo_py', 'extra'], 'unexpected argument "extra"', 'the command takes at most 1 argument;'],
    [['tool', 'forged', 'show', 'a', 'b'], 'unexpected argument "b"', 'the command takes at most 2 arguments'],
    [['tool', 'forged', 'list', 'extra'], 'unexpected argument "extra"', 'list takes no tool name; show and remove take one'],
    [['doctor', 'extra'], 'unexpected argument "extra"', 'the command takes no arguments besides its options'],
  ])('exits 2 for an argument the command does not take (%j), never dropping it', async (args, message, hint) => {
    const { code, stdout, stderr } = await forge(args, fixtureProject('basic'));
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`error: ${message} (${hint}`);
    expect(stderr).toContain(`usage: forge ${args[0] === 'tool' ? `tool ${args[1]}` : args[0]}`);
  });

  it('prints a command\'s usage with examples through forge help', async () => {
    const { code, stdout } = await forge(['help', 'tool'], tempDir());
    expect(code).toBe(0);
    expect(stdout).toContain('usage: forge tool <subcommand>');
    expect(stdout).toContain('examples:');
  });

  it('says so when there is no project', async () => {
    const { code, stderr } = await forge(['validate'], tempDir());
    expect(code).toBe(1);
    expect(stderr).toContain('FORGE_CONFIG_NOT_FOUND');
    expect(stderr).toContain('forge init');
  });

  it('forge tool run of a builtin the project has not enabled says how to enable it', async () => {
    const { code, stderr } = await forge(['tool', 'run', 'glob_search', '{"pattern": "*.txt"}'], writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') }));
    expect(code).toBe(1);
    expect(stderr).toBe('✘ FORGE_TOOL_UNKNOWN "glob_search" ships with Forge but is not enabled in this project\n  hint: enable it under tools: in forge.yaml (- glob_search); forge tool describe glob_search shows what it does\n');
  });

  it('forge tool describe --json of a tool it does not have gives the code, as forge tool get does', async () => {
    const described = await forge(['tool', 'describe', 'greet', '--json'], tempDir());
    const got = await forge(['tool', 'get', 'greet', '--json'], tempDir());
    expect(described.code).toBe(1);
    expect(JSON.parse(described.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN', message: 'no tool named "greet"' } });
    expect(JSON.parse(got.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN' } });
  });

  it.each([['tool', 'run', 'greet'], ['tool', 'describe', 'greet']])('forge %s %s outside a project says there is no forge.yaml, not "there are no tools to call"', async (...args) => {
    const { code, stderr } = await forge(args, tempDir());
    expect(code).toBe(1);
    expect(stderr).toBe('✘ FORGE_TOOL_UNKNOWN no tool named "greet"\n  hint: no forge.yaml in this directory or any parent, so only the user and global scopes\' tools are found: cd into your project, or run `forge init` to create one\n');
  });
});

describe("README's Commands table", () => {
  it('has a row for every command and tool subcommand --help lists', async () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('\n## Commands\n'), readme.indexOf('\n## ', readme.indexOf('\n## Commands\n') + 1));
    const listed = (help: string) => [...help.slice(help.search(/^(sub)?commands:$/m)).split('\n\n')[0].matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]);
    const commands = listed((await forge(['--help'], tempDir())).stdout);
    const subcommands = listed((await forge(['tool', '--help'], tempDir())).stdout);
    expect(commands).toContain('doctor');
    expect(subcommands).toContain('install');
    const missing = [...commands.filter((c) => c !== 'tool').map((c) => `forge ${c}`), ...subcommands.map((c) => `forge tool ${c}`)].filter((c) => !table.includes('`' + c));
    expect(missing).toEqual([]);
  });
});

describe('forge validate', () => {
  it('accepts a valid project', async () => {
    const { code, stdout } = await forge(['validate'], fixtureProject('basic'));
    expect(code).toBe(0);
    expect(stdout).toContain('forge.yaml and 8 tools are valid');
  });

  it('finds forge.yaml from a subdirectory', async () => {
    const dir = fixtureProject('basic');
    const { code } = await forge(['validate'], join(dir, 'tools'));
    expect(code).toBe(0);
  });

  it('reports schema errors with file:line:column and a hint', async () => {
    const dir = writeProject({ 'forge.yaml': 'agent_id: ok\nversion: 1.0.0\nmodel:\n  provider: openia\n  name: m\n' });
    const { code, stderr } = await forge(['validate'], dir);
    expect(code).toBe(1);
    expect(stderr).toContain('forge.yaml:4:13 FORGE_CONFIG_VALUE "model.provider" must be one of openai, anthropic (got "openia")');
    expect(stderr).toContain('hint: did you mean "openai"?');
  });

  it('validates --config FILE', async () => {
    const dir = fixtureProject('basic');
    const { code } = await forge(['validate', '--config', join(dir, 'forge.yaml')], tempDir());
    expect(code).toBe(0);
  });

  // It said Node's errno alone: "cannot read ../nope.yaml: ENOENT", "cannot read forge.yaml: EISDIR".
  it('says in words why a forge.yaml it cannot read is not read, with a hint: a --config that names nothing, a forge.yaml that is a directory', async () => {
    const here = tempDir();
    const missing = await forge(['validate', '--config', 'nope.yaml'], here);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('✘ nope.yaml FORGE_CONFIG_READ cannot read nope.yaml: there is no such file\n  hint: --config names the project\'s forge.yaml file');
    mkdirSync(join(here, 'forge.yaml'));
    const directory = await forge(['validate', '--json'], here);
    expect(directory.code).toBe(1);
    expect(JSON.parse(directory.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_CONFIG_READ', file: 'forge.yaml', message: 'cannot read forge.yaml: it is a directory', hint: expect.stringContaining('--config') } });
  });
});

describe('forge tool list / describe', () => {
  it('lists tools with category and tags', async () => {
    const { code, stdout } = await forge(['tool', 'list'], fixtureProject('basic'));
    expect(code).toBe(0);
    expect(stdout).toMatch(/^dev_probe_py\s+dev\s/m);
    expect(stdout).toMatch(/^echo_py\s+custom\s+read\s+Echo the message back/m);
    expect(stdout).toMatch(/^uuid_generate\s+builtin\s+read/m);
  });

  it('filters by --category and prints --json', async () => {
    const { stdout } = await forge(['tool', 'list', '--category', 'dev', '--json'], fixtureProject('basic'));
    expect(JSON.parse(stdout).tools.map((t: { name: string }) => t.name)).toEqual(['dev_probe_py', 'dev_probe_ts']);
  });

  it('rejects an unknown category with exit 2', async () => {
    const { code, stderr } = await forge(['tool', 'list', '--category', 'devv'], fixtureProject('basic'));
    expect(code).toBe(2);
    expect(stderr).toContain('did you mean "dev"?');
  });

  it('keeps listing the good tools when one file is broken', async () => {
    const dir = fixtureProject('basic');
    writeFileSync(join(dir, 'tools/broken.py'), '"""\nTool: broken\nDescription: d\nInput:\n  x (strng): X.\n"""\n');
    const { code, stdout, stderr } = await forge(['tool', 'list'], dir);
    expect(code).toBe(0);
    expect(stderr).toContain('tools/broken.py:5:6');
    expect(stdout).toContain('echo_py');
    expect(stdout).not.toContain('broken');
  });

  it('describes a tool: inputs, types, defaults and how to run it', async () => {
    const { code, stdout } = await forge(['tool', 'describe', 'echo_py'], fixtureProject('basic'));
    expect(code).toBe(0);
    expect(stdout).toContain('echo_py  (custom)');
    expect(stdout).toMatch(/message\s+str\s+required/);
    expect(stdout).toMatch(/times\s+int\s+optional default 1/);
    expect(stdout).toContain('source    tools/echo_py.py (python, worker)');
    expect(stdout).toContain('forge tool run echo_py --param message="..."');
  });

  it('describes a tool as JSON', async () => {
    const { stdout } = await forge(['tool', 'describe', 'ts_script', '--json'], fixtureProject('basic'));
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, tool: { name: 'ts_script', source: { kind: 'typescript', style: 'script' } } });
  });

  it('exits 1 for an unknown tool, with a suggestion', async () => {
    const { code, stderr } = await forge(['tool', 'describe', 'echo_pyy'], fixtureProject('basic'));
    expect(code).toBe(1);
    expect(stderr).toContain('FORGE_TOOL_UNKNOWN no tool named "echo_pyy"');
    expect(stderr).toContain('did you mean "echo_py"?');
  });
});

describe('forge tool run', () => {
  it.each([
    ['echo_py', ['--param', 'message=hi', '--param', 'times=3'], { echo: 'HI HI HI' }],
    ['py_script', ['--param', 'a=1.5', '--param', 'b=2'], { sum: 3.5 }],
    ['ts_execute', ['--param', 'sentence=one two three'], { reversed: 'three two one' }],
    ['ts_script', ['--input', '{"text": "hello"}'], { length: 5 }],
    ['echo_py', ['{"message": "hi", "times": 2}'], { echo: 'HI HI' }],
    ['echo_py', ['{"message": "hi", "times": 2}', '--param', 'times=1'], { echo: 'HI' }],
    ['dev_probe_ts', [], { marker: 'DEV_ONLY_MARKER_TS' }],
  ])('runs %s from sources', async (name, args, expected) => {
    const { code, stdout, stderr } = await forge(['tool', 'run', name, ...args], fixtureProject('basic'));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(expected);
  });

  it('exits 1 with the tool\'s error and prints --json results', async () => {
    const dir = fixtureProject('basic');
    const bad = await forge(['tool', 'run', 'echo_py', '--param', 'times=2'], dir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('missing required argument "message"');
    const json = await forge(['tool', 'run', 'echo_py', '--param', 'message=x', '--json'], dir);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, value: { echo: 'X' } });
  });

  it('reports a Python tool that does not compile as forge validate does (file:line:col, FORGE_PY_SYNTAX), before starting it', async () => {
    const tool = '"""\nTool: broken\nDescription: Broken.\n\nInput:\n  x (str): X.\n"""\n\ndef execute(args)\n    return {"x": 1}\n';
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/broken.py': tool });
    const { code, stderr } = await forge(['tool', 'run', 'broken', '--param', 'x=1'], dir);
    expect(code).toBe(1);
    expect(stderr).toMatch(/tools\/broken\.py:9:18 FORGE_PY_SYNTAX expected ':'/);
    expect(stderr).not.toContain('FORGE_TOOL_FAILED');
    const json = await forge(['tool', 'run', 'broken', '--param', 'x=1', '--json'], dir);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, errors: [{ code: 'FORGE_PY_SYNTAX', file: 'tools/broken.py', line: 9, column: 18 }] });
  });

  it.each([
    ['tools/open.py', '"""\nTool: open\nDescription: Never closed.\n\ndef execute(args):\n    return 1\n', '✘ tools/open.py:1:1 FORGE_DOCSTRING_SYNTAX the docstring is never closed\n  1 │ """\n    │ ^\n  hint: close it with """\n'],
    ['tools/open.ts', '/**\n * Tool: open\n * Description: Never closed.\nexport function execute() { return 1; }\n', '✘ tools/open.ts:1:1 FORGE_DOCSTRING_SYNTAX the docstring is never closed\n  1 │ /**\n    │ ^\n  hint: close it with */\n'],
  ])('shows a docstring never closed (%s) at its opening line, with a caret', async (file, text, shown) => {
    const { code, stderr } = await forge(['validate'], writeProject({ 'forge.yaml': minimalConfig(), [file]: text }));
    expect(code).toBe(1);
    expect(stderr).toBe(shown);
  });

  it('reports a TypeScript tool that does not compile as forge validate does (file:line:col, FORGE_SYNTAX and the line), not inside a FORGE_TOOL_START message', async () => {
    const tool = '/**\n * Tool: broken_ts\n * Description: Broken.\n */\nexport function execute(args: { x: string } {\n  return 1;\n}\n';
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/broken_ts.ts': tool });
    const { code, stderr } = await forge(['tool', 'run', 'broken_ts'], dir);
    expect(code).toBe(1);
    expect(stderr).toBe('✘ tools/broken_ts.ts:5:45 FORGE_SYNTAX Expected ")" but found "{"\n  5 │ export function execute(args: { x: string } {\n    │                                             ^\n✘ tool "broken_ts" cannot run: a file does not compile (above)\n');
    const json = await forge(['tool', 'run', 'broken_ts', '--json'], dir);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, errors: [{ code: 'FORGE_SYNTAX', file: 'tools/broken_ts.ts', line: 5, column: 45 }] });
  });

  it('takes null for an Optional[T] argument (a Python tool gets None), from JSON and from --param, and describes it so', async () => {
    const tool = '"""\nTool: maybe\nDescription: Says what it got.\n\nInput:\n  z (Optional[int]): Z.\n  kind (Optional[enum(a|b)]): Kind.\n"""\n\ndef execute(args):\n    return {"z": repr(args.get("z")), "kind": repr(args.get("kind"))}\n';
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/maybe.py': tool });
    const fromJson = await forge(['tool', 'run', 'maybe', '{"z": null, "kind": null}', '--json'], dir);
    expect(JSON.parse(fromJson.stdout), fromJson.stderr).toMatchObject({ ok: true, value: { z: 'None', kind: 'None' } });
    const fromParams = await forge(['tool', 'run', 'maybe', '--param', 'z=null', '--param', 'kind=b', '--json'], dir);
    expect(JSON.parse(fromParams.stdout), fromParams.stderr).toMatchObject({ ok: true, value: { z: 'None', kind: "'b'" } });
    expect(JSON.parse((await forge(['tool', 'run', 'maybe', '--param', 'z=7', '--json'], dir)).stdout)).toMatchObject({ ok: true, value: { z: '7' } });
    // Still a T when it is not null.
    expect((await forge(['tool', 'run', 'maybe', '{"z": "seven"}'], dir)).stderr).toContain('FORGE_TOOL_ARGS');
    const described = await forge(['tool', 'describe', 'maybe'], dir);
    expect(described.stdout).toMatch(/z\s+Optional\[int\]\s+optional/);
    expect(described.stdout).toMatch(/kind\s+Optional\[enum\(a\|b\)\]\s+optional/);
  });

  it("shows a TypeScript tool's stack trace at its own file and line with --verbose, not the build cache's", async () => {
    const tool = '/**\n * Tool: tsthrow\n * Description: Throws.\n * Tags: read\n */\nexport function execute() {\n  const nothing: { deep?: { x: number } } = {};\n  if (!nothing.deep) {\n    throw new Error("x is zero");\n  }\n  return nothing.deep.x;\n}\n';
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/tsthrow.ts': tool });
    const { code, stderr } = await forge(['tool', 'run', 'tsthrow', '--verbose'], dir);
    expect(code).toBe(1);
    expect(stderr).toMatch(/at execute \(\S*tools\/tsthrow\.ts:9:11\)/);
    expect(stderr).not.toContain('.forge/cache');
  });

  it("shows what concerns the tool it runs, and counts the other files' problems", async () => {
    const dir = fixtureProject('basic');
    writeFileSync(join(dir, 'tools/broken.py'), '"""\nTool: broken\nDescription: d\nInput:\n  x (strng): X.\n"""\n');
    const { code, stderr } = await forge(['tool', 'run', 'echo_py', '--param', 'message=hi'], dir);
    expect(code).toBe(0);
    expect(stderr).not.toContain('broken.py');
    expect(stderr).toContain("· 1 problem in other tools' files (forge validate lists them)");
    // The broken one itself is shown its error.
    expect((await forge(['tool', 'run', 'broken'], dir)).stderr).toContain('tools/broken.py:5:6');
  });

  it("runs a tool in the sandbox the bundle runs it in: forge.yaml's memory cap, a tool's network: false, its own PID namespace", async () => {
    const listener = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    try {
      const py = (name: string, body: string) => `"""\nTool: ${name}\nDescription: Probe.\nTags: read\n"""\nimport os, socket\n\ndef execute(args):\n${body}\n`;
      const dir = writeProject({
        'forge.yaml': minimalConfig('sandbox:\n  memory: 256MB\n  tools:\n    offline: { network: false }\n'),
        'tools/hog.py': py('hog', '    return {"len": len(bytearray(600 * 1024 * 1024))}'),
        'tools/offline.py': py('offline', `    try:\n        socket.create_connection(("127.0.0.1", ${port}), timeout=2)\n        return "connected"\n    except OSError as e:\n        return "refused"`),
        'tools/online.py': py('online', `    socket.create_connection(("127.0.0.1", ${port}), timeout=2)\n    return "connected"`),
        'tools/pids.py': py('pids', '    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())[:5]'),
      });
      const hog = await forge(['tool', 'run', 'hog'], dir);
      expect(hog.code).toBe(1);
      expect(hog.stderr).toContain('MemoryError');
      // With the sandbox off, the caps still apply (prlimit, as without bubblewrap), and nothing says prlimit is missing.
      const unsandboxed = await forge(['tool', 'run', 'hog'], dir, { FORGE_SANDBOX: 'off' });
      expect(unsandboxed.code).toBe(1);
      expect(unsandboxed.stderr).toContain('MemoryError');
      expect(unsandboxed.stderr).not.toContain('prlimit');
      expect(JSON.parse((await forge(['tool', 'run', 'offline', '--json'], dir)).stdout)).toMatchObject({ ok: true, value: 'refused' });
      expect(JSON.parse((await forge(['tool', 'run', 'online', '--json'], dir)).stdout)).toMatchObject({ ok: true, value: 'connected' });
      // The host's processes are not there: the namespace's own only.
      const pids = JSON.parse((await forge(['tool', 'run', 'pids', '--json'], dir)).stdout).value as number[];
      expect(pids.length).toBeLessThan(5);
    } finally {
      listener.close();
    }
  });

  it('exits 2 for a --param value that does not fit its type', async () => {
    const { code, stderr } = await forge(['tool', 'run', 'echo_py', '--param', 'message=x', '--param', 'times=many'], fixtureProject('basic'));
    expect(code).toBe(2);
    expect(stderr).toContain('--param times must be a whole number, got "many"');
    // An int takes a whole number: 2.5 is refused here, as a usage error, not sent to fail validation.
    const half = await forge(['tool', 'run', 'echo_py', '--param', 'message=x', '--param', 'times=2.5'], fixtureProject('basic'));
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('--param times must be a whole number, got "2.5"');
  });

  it.each([
    ['whose docstring has an error', { 'tools/x1.py': '"""\nTool: x1\nDescription: d\nTimeout: soon\n"""\n\ndef execute(args):\n    return 1\n' }, 'x1', 'FORGE_DOCSTRING_TIMEOUT'],
    ['that two files define', { 'tools/greet.py': '"""\nTool: greet\nDescription: d\n"""\n\ndef execute(args):\n    return "py"\n', 'tools/greet.yaml': 'description: d\nbash: echo yaml\n' }, 'greet', 'FORGE_TOOL_COLLISION'],
  ])('refuses to run or describe a tool %s, with that error (never "no tool named", never one of the two)', async (_name, files, tool, code) => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), ...files });
    const described = await forge(['tool', 'describe', tool], dir);
    expect(described).toMatchObject({ code: 1, stdout: '' });
    expect(described.stderr).toContain(code);
    expect(described.stderr).toContain(`tool "${tool}" cannot be described: its file has errors (above)`);
    const text = await forge(['tool', 'run', tool], dir);
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('');
    expect(text.stderr).toContain(code);
    expect(text.stderr).toContain(`tool "${tool}" cannot run: its file has errors (above)`);
    expect(text.stderr).not.toContain('FORGE_TOOL_UNKNOWN');
    const json = await forge(['tool', 'run', tool, '--json'], dir);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, errors: [expect.objectContaining({ code })] });
  });

  it.each([
    [['{"message": x}'], 'the argument after the tool name is not valid JSON'],
    [['--param', 'message=the', 'quick', 'brown', 'fox'], 'unexpected argument "quick" (give a tool\'s arguments as one JSON object after its name, with --input JSON, or with --param K=V; quote a value that has spaces)'], // unquoted
    [['{"message": "x"}', 'stray'], 'unexpected argument "stray"'],
    [['{"message": "x"}', '--input', '{"message": "y"}'], 'the arguments are given twice: as JSON after the tool name and with --input'],
    [['["x"]'], 'the argument after the tool name must be a JSON object'],
    [['--input', 'null'], '--input must be a JSON object'],
  ])('exits 2 for arguments it cannot take as one JSON object (%j), saying how to give them, and runs nothing', async (args, message) => {
    const dir = fixtureProject('basic');
    const { code, stdout, stderr } = await forge(['tool', 'run', 'echo_py', ...args], dir);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`error: ${message}`);
    expect(stderr).toContain("give a tool's arguments as one JSON object after its name, with --input JSON, or with --param K=V");
  });

  it.each([['echo_py', ['message=x']], ['py_script', ['a=1', '--param', 'b=2']]])('takes a --timeout longer than a timer holds (%s) as a long one, not as none: the tool runs', async (tool, params) => {
    const { code, stdout, stderr } = await forge(['tool', 'run', tool, '--param', ...params, '--timeout', '3000000000'], fixtureProject('basic'));
    expect(stderr).toBe(''); // no TimeoutOverflowWarning, no timeout
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toBeTruthy();
  });

  it('runs a YAML tool whose timeouts (its own, a step\'s) are longer than a timer holds', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/patient.yaml': 'description: Waits a long time at most.\ntimeout: 50000m\nsteps:\n  - name: say\n    bash: echo patient\n    timeout: 50000m\n' });
    const { code, stdout, stderr } = await forge(['tool', 'run', 'patient'], dir);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('patient');
  });

  it('exits 2 for --timeout 0, which no call could meet', async () => {
    const { code, stderr } = await forge(['tool', 'run', 'echo_py', '--param', 'message=x', '--timeout', '0'], fixtureProject('basic'));
    expect(code).toBe(2);
    expect(stderr).toContain('--timeout takes milliseconds (30000) or a duration (30s, 2m, 500ms), at least 1 ms, got "0"');
  });

  it.each(['300', '300ms', '1s'])('applies --timeout %s (milliseconds, or a duration as docstrings write it)', async (timeout) => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/slow.py': '"""\nTool: slow\nDescription: d\n"""\nimport time\ntime.sleep(30)\n' });
    const started = Date.now();
    const { code, stderr } = await forge(['tool', 'run', 'slow', '--timeout', timeout], dir);
    expect(code).toBe(1);
    expect(stderr).toContain('FORGE_TOOL_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('forge init', () => {
  it('scaffolds a project that validates, runs and builds straight away', async () => {
    const parent = tempDir();
    const init = await forge(['init', 'My Agent'], parent);
    expect(init.code).toBe(0);
    const dir = join(parent, 'My Agent');
    for (const file of ['forge.yaml', 'tools/greet.py', 'tools/word_count.ts', '.gitignore']) expect(existsSync(join(dir, file)), file).toBe(true);
    expect(readFileSync(join(dir, 'forge.yaml'), 'utf8')).toContain('agent_id: my-agent');
    // What forge build and forge package write by default stays out of git.
    expect(readFileSync(join(dir, '.gitignore'), 'utf8').split('\n')).toEqual(expect.arrayContaining(['.forge-output/', '.forge-image/', '.forge/']));

    expect((await forge(['validate'], dir)).code).toBe(0);
    const greet = await forge(['tool', 'run', 'greet', '--param', 'name=Ada', '--param', 'language=fr'], dir);
    expect(JSON.parse(greet.stdout)).toEqual({ greeting: 'Bonjour, Ada!' });
    const count = await forge(['tool', 'run', 'word_count', '--param', 'text=a b\nc'], dir);
    expect(JSON.parse(count.stdout)).toEqual({ words: 3, lines: 2, characters: 5 });
    const built = await forge(['build', '--prod'], dir);
    expect(built.code).toBe(0);
    expect(existsSync(join(dir, '.forge-output/my-agent-0.1.0.tgz'))).toBe(true);
  });

  it('writes a $schema that works on any machine: relative into node_modules when Forge is installed there, else the published schema', async () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string };
    const plain = tempDir();
    expect((await forge(['init'], plain)).code).toBe(0);
    expect(readFileSync(join(plain, 'forge.yaml'), 'utf8').split('\n')[0]).toBe(`# yaml-language-server: $schema=https://unpkg.com/${pkg.name}@${pkg.version}/schemas/forge.schema.json`);
    const local = tempDir();
    mkdirSync(join(local, 'node_modules', pkg.name, 'schemas'), { recursive: true });
    writeFileSync(join(local, 'node_modules', pkg.name, 'schemas', 'forge.schema.json'), '{}');
    expect((await forge(['init'], local)).code).toBe(0);
    expect(readFileSync(join(local, 'forge.yaml'), 'utf8').split('\n')[0]).toBe(`# yaml-language-server: $schema=./node_modules/${pkg.name}/schemas/forge.schema.json`);
  });

  it('quotes the directory in its next steps when a shell would split it', async () => {
    const cwd = tempDir('forge-init-');
    const { code, stdout } = await forge(['init', "My Agent's"], cwd);
    expect(code).toBe(0);
    expect(stdout).toContain(`  cd 'My Agent'\\''s'\n`);
  });

  it("keeps a user's files where the project's would go, says which, and suggests only what works", async () => {
    const parent = tempDir();
    const dir = join(parent, 'ex');
    mkdirSync(join(dir, 'tools'), { recursive: true });
    writeFileSync(join(dir, 'tools', 'greet.py'), 'MY OWN CODE\n');
    writeFileSync(join(dir, '.gitignore'), 'keep\n');
    const init = await forge(['init', 'ex'], parent);
    expect(init.code, init.stderr).toBe(0);
    expect(readFileSync(join(dir, 'tools', 'greet.py'), 'utf8')).toBe('MY OWN CODE\n');
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('keep\n');
    const kept = init.stdout.slice(init.stdout.indexOf('kept what was already there (forge init overwrites nothing):\n'));
    expect(kept).toContain(`\n  ${join('ex', 'tools', 'greet.py')}\n`);
    expect(kept).toContain(`\n  ${join('ex', '.gitignore')}\n`);
    expect(init.stdout.indexOf('kept what')).toBeGreaterThan(0);
    expect(init.stdout).toContain(`  add .forge-output/, .forge-image/ and .forge/ to ${join('ex', '.gitignore')}`);
    expect(init.stdout).toContain('  forge tool list\n');
    expect(init.stdout).not.toContain('forge tool run greet');
    const other = join(parent, 'other');
    mkdirSync(join(other, 'tools'), { recursive: true });
    writeFileSync(join(other, 'tools', 'word_count.ts'), '// mine\n');
    const json = await forge(['init', 'other', '--json'], parent);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, kept: [join('other', 'tools', 'word_count.ts')], files: expect.arrayContaining([join('other', 'tools', 'greet.py')]) });
    const plain = await forge(['init', 'fresh'], parent);
    expect(plain.stdout).not.toContain('kept');
    expect(plain.stdout).toContain('forge tool run greet --param name=Ada');
  });

  it('does not overwrite an existing project', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'forge.yaml'), 'mine');
    mkdirSync(join(dir, 'tools'));
    const { code, stderr } = await forge(['init'], dir);
    expect(code).toBe(1);
    expect(stderr).toBe('✘ FORGE_FILE_EXISTS forge.yaml already exists; not overwriting it\n  hint: this is a project already (forge tool list, forge build): forge init NAME makes a new one in NAME/\n');
    expect(readFileSync(join(dir, 'forge.yaml'), 'utf8')).toBe('mine');
    // --json: one JSON object on stdout, as every command's failure.
    const json = await forge(['init', '--json'], dir);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_EXISTS' } });
  });

  it('refuses an agent id it cannot use as a usage error, naming one it can', async () => {
    const { code, stderr } = await forge(['init', 'x', '--id', 'Bad Id!'], tempDir());
    expect(code).toBe(2);
    expect(stderr).toContain('error: "Bad Id!" is not a valid agent id (use lowercase letters, digits and dashes, at most 63, e.g. --id bad-id)\n\nusage: forge init');
  });

  it('says the agent id it made from a directory name, dropping accents, and asks for one when the name has nothing to make it from, writing nothing', async () => {
    const parent = tempDir('forge-init-');
    const made = await forge(['init', 'Café Ü'], parent);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain('✓ created cafe-u (the agent id, from the directory name "Café Ü"; --id sets another)\n');
    expect(readFileSync(join(parent, 'Café Ü', 'forge.yaml'), 'utf8')).toContain('agent_id: cafe-u\n');
    // A name that is an id already is not said to be one.
    expect((await forge(['init', 'plain'], parent)).stdout).toContain('✓ created plain\n');

    const empty = tempDir('forge-init-');
    const refused = await forge(['init', '!!!'], empty);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`error: cannot make an agent id from the directory name "!!!": it has no letter a-z or digit 0-9 (give one: forge init '!!!' --id my-agent)`);
    const json = await forge(['init', '!!!', '--json'], empty);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_USAGE', hint: "give one: forge init '!!!' --id my-agent" } });
    expect(readdirSync(empty)).toEqual([]);
    // The id it names does make the project.
    expect((await forge(['init', '!!!', '--id', 'my-agent'], empty)).code).toBe(0);
  });

  it('refuses a file where the project needs a directory with its code, before writing anything', async () => {
    const cwd = tempDir('forge-init-');
    writeFileSync(join(cwd, 'notes'), 'mine');
    const onFile = await forge(['init', 'notes'], cwd);
    expect(onFile.code).toBe(1);
    expect(onFile.stderr).toBe('✘ FORGE_FILE_NOT_DIRECTORY "notes" is a file, where forge init makes a directory; nothing was written\n  hint: forge init NAME makes the project in a new directory NAME/: pick a name no file has\n');
    const under = await forge(['init', 'notes/agent', '--json'], cwd);
    expect(JSON.parse(under.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_NOT_DIRECTORY', message: expect.stringContaining('"notes" is a file') } });

    mkdirSync(join(cwd, 'half'));
    writeFileSync(join(cwd, 'half', 'tools'), 'mine');
    const toolsFile = await forge(['init', 'half'], cwd);
    expect(toolsFile.code).toBe(1);
    expect(toolsFile.stderr).toContain('✘ FORGE_FILE_NOT_DIRECTORY "half/tools" is a file, where forge init makes a directory; nothing was written\n  hint: move half/tools away, or run forge init in another directory\n');
    expect(readdirSync(join(cwd, 'half'))).toEqual(['tools']);
    expect(readFileSync(join(cwd, 'notes'), 'utf8')).toBe('mine');
  });

  it('leaves nothing behind when a write fails halfway (a path past the system\'s length limit)', async () => {
    // The project's directory path is long enough for forge.yaml and .gitignore, and too long for tools/greet.py (PATH_MAX 4096).
    const cwd = tempDir('forge-init-');
    let parent = cwd;
    while (parent.length < 4083 - 201) parent = join(parent, 'd'.repeat(200));
    mkdirSync(parent, { recursive: true });
    const dir = join(parent, 'n'.repeat(4083 - parent.length - 1));
    const { code, stdout } = await forge(['init', dir, '--json'], cwd);
    expect(code).toBe(1);
    const doc = JSON.parse(stdout);
    expect(doc.error.code).toBe('FORGE_PATH_INVALID');
    expect(doc.error.message).toMatch(/^cannot write the new project: ".*tools\/greet\.py" has a name that is too long; nothing was left behind$/);
    expect(existsSync(dir)).toBe(false);
  });
});
