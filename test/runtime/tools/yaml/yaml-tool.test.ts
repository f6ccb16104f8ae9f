import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../../../runtime/tools/create-tools.ts';
import type { ToolResult } from '../../../../runtime/tools/model.ts';
import { createYamlToolFactory } from '../../../../runtime/tools/yaml/load-yaml-tool.ts';
import { currentPlatform } from '../../../../runtime/tools/yaml/definition.ts';
import { isYamlTool, type CommandEvent } from '../../../../runtime/tools/yaml/yaml-tool.ts';
import { tempDir } from '../../../helpers/project.ts';
import { yamlRegistry } from './helpers.ts';

function errorOf(result: ToolResult) {
  expect(result.ok, JSON.stringify(result)).toBe(false);
  return result.ok ? { code: '', message: '' } : result.error;
}

describe('YAML tool steps', () => {
  it('gives later steps the output, stdout, stderr and exit code of earlier ones', async () => {
    const r = yamlRegistry(tempDir(), {
      t: {
        description: 'Steps.',
        steps: [
          { name: 'a', bash: 'echo out; echo err >&2' },
          { name: 'b', python: 'import json\nprint(json.dumps({"n": 2}))' },
          { name: 'c', sh: "echo '{a.output}|{a.stdout}|{a.stderr}|{a.exit-code}|{b.output.n}'" },
        ],
      },
    });
    expect(await r.execute('t', {})).toMatchObject({ ok: true, value: 'out|out\n|err\n|0|2' });
  });

  it('stops at a step that exits non-zero, with its stderr, and runs nothing after it', async () => {
    const dir = tempDir();
    const r = yamlRegistry(dir, {
      t: { description: 'Fails.', steps: [{ name: 'check', bash: 'echo "no such branch" >&2; exit 3' }, { name: 'after', bash: 'touch ran-after' }] },
    });
    const error = errorOf(await r.execute('t', {}));
    expect(error).toMatchObject({ code: 'FORGE_YAML_STEP_FAILED', message: 'tool "t" failed at step "check": exited with code 3: no such branch', details: 'no such branch' });
    expect(existsSync(join(dir, 'ran-after'))).toBe(false);
  });

  it('goes on after a step with continue-on-error, which can then be inspected', async () => {
    const r = yamlRegistry(tempDir(), {
      t: {
        description: 'Recovers.',
        steps: [
          { name: 'probe', bash: 'exit 4', 'continue-on-error': true },
          { name: 'report', bash: 'echo "probe exited {probe.exit-code}"' },
        ],
      },
    });
    expect(await r.execute('t', {})).toMatchObject({ ok: true, value: 'probe exited 4' });
  });

  it('skips a step whose when: is false; the result is the last step that ran', async () => {
    const r = yamlRegistry(tempDir(), {
      t: {
        description: 'Conditional.',
        parameters: { mode: { type: 'string', enum: ['fast', 'slow'] }, n: { type: 'integer', default: 3 } },
        steps: [
          { name: 'count', bash: 'echo {n}' },
          { name: 'fast', bash: 'echo fast', when: "{mode} == 'fast' && {count.output} >= 3" },
          { name: 'slow', bash: 'echo slow', when: "{mode} == 'slow' || !{count.output}" },
        ],
      },
    });
    expect(await r.execute('t', { mode: 'fast' })).toMatchObject({ ok: true, value: 'fast' });
    expect(await r.execute('t', { mode: 'slow' })).toMatchObject({ ok: true, value: 'slow' });
    // A step's output is its text: "2", not the number (exact output; see test/e2e/exact-output/).
    expect(await r.execute('t', { mode: 'fast', n: 2 })).toMatchObject({ ok: true, value: '2' });
  });

  it('renders a skipped step in output: as null where it stands as a JSON value, and as nothing elsewhere', async () => {
    const r = yamlRegistry(tempDir(), {
      t: {
        description: 'Skips.',
        parameters: { wanted: { type: 'boolean', default: false } },
        steps: [
          { name: 'quote', bash: 'echo \'{"price": 3}\'', when: '{wanted}' },
          { name: 'name', bash: 'echo ACME' },
        ],
        output: '{"quote": {quote.output}, "list": [{quote.output}], "name": "{name.output}"}',
      },
      text: { description: 'Skips.', steps: [{ name: 'quote', bash: 'echo 1', when: '1 == 2' }, { name: 'name', bash: 'echo ACME' }], output: 'x: {quote.output}, {name.output}' },
    });
    const skipped = await r.execute('t', { wanted: false });
    expect(skipped).toMatchObject({ ok: true });
    expect(JSON.parse((skipped as { value: string }).value)).toEqual({ quote: null, list: [null], name: 'ACME' });
    expect(await r.execute('text', {})).toMatchObject({ ok: true, value: 'x: , ACME' });
    const ran = await r.execute('t', { wanted: true });
    expect(JSON.parse((ran as { value: string }).value)).toEqual({ quote: { price: 3 }, list: [{ price: 3 }], name: 'ACME' });
  });

  it('builds the result from output:, with {{ }} as literal braces', async () => {
    const r = yamlRegistry(tempDir(), {
      t: { description: 'Output.', parameters: { who: { type: 'string' } }, steps: [{ name: 'a', bash: 'echo hi', output_var: 'greeting' }], output: '{{"text": "{greeting}, {who}"}}' },
    });
    expect(await r.execute('t', { who: 'Ada' })).toMatchObject({ ok: true, value: '{"text": "hi, Ada"}' });
  });

  describe('output: written as JSON', () => {
    // Quotes, backslashes (one before an n), a newline, a tab, control characters, non-ASCII, U+2028 and an attempt to add a key.
    const TRICKY = 'say "hi" \\ C:\\new\nline 2\tcol\u0001\u001f\u007f é 中 😀 \u2028 end", "admin": true, "x": "';
    const valueOf = (result: ToolResult) => {
      expect(result.ok, JSON.stringify(result)).toBe(true);
      return JSON.parse((result as { value: string }).value) as Record<string, unknown>;
    };

    it('escapes a step\'s output inside a JSON string, and keeps a number standing as a value a number', async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'text.txt'), TRICKY);
      const r = yamlRegistry(dir, {
        t: {
          description: 'JSON.',
          steps: [{ name: 'show', bash: 'cat text.txt' }, { name: 'count', bash: 'echo 42' }, { name: 'obj', bash: 'echo \'{"k": [1, "v"]}\'' }],
          output: '{"summary": "{show.output}", "raw": "{show.stdout}", "n": {count.output}, "list": [{count.output}, {obj.output}], "label": "n={count.output}", "ok": true}',
        },
      });
      const value = valueOf(await r.execute('t', {}));
      expect(value).toEqual({ summary: TRICKY, raw: TRICKY, n: 42, list: [42, { k: [1, 'v'] }], label: 'n=42', ok: true });
      expect(Object.keys(value)).not.toContain('admin');
    });

    it('escapes parameters and {input} inside a JSON string the same way, with the literal text\'s own \\" honoured', async () => {
      const r = yamlRegistry(tempDir(), {
        t: { description: 'JSON.', parameters: { text: { type: 'string' }, limit: { type: 'number' } }, sh: 'true', output: '{"said": "she said \\"{text}\\" twice", "limit": {limit}, "args": "{input}"}' },
      });
      const value = valueOf(await r.execute('t', { text: TRICKY, limit: 2.5 }));
      expect(value).toEqual({ said: `she said "${TRICKY}" twice`, limit: 2.5, args: JSON.stringify({ text: TRICKY, limit: 2.5 }) });
    });

    it('fails the call when text that is not one JSON value stands as a value, instead of returning broken or rewritten JSON', async () => {
      const r = yamlRegistry(tempDir(), {
        t: { description: 'JSON.', parameters: { v: { type: 'string' } }, sh: 'true', output: '{"n": {v}, "admin": false}' },
      });
      for (const v of ['hello', '1, "admin": true', '1} {"admin": true', '']) {
        expect(errorOf(await r.execute('t', { v }))).toMatchObject({
          code: 'FORGE_YAML_VALUE',
          message: expect.stringContaining('output: {v} stands as a JSON value'),
          hint: expect.stringContaining('"{v}"'),
        });
      }
      expect(await r.execute('t', { v: ' -3.5e2 ' })).toMatchObject({ ok: true, value: '{"n":  -3.5e2 , "admin": false}' });
    });

    it('escapes values in an output of one JSON document a line (JSON Lines) or several in a row, as in one', async () => {
      // A step's output that closes its line's object and starts a record of its own.
      const SPLICE = 'x"}\n{"admin": true, "z": "';
      const dir = tempDir();
      writeFileSync(join(dir, 'text.txt'), SPLICE);
      const r = yamlRegistry(dir, {
        lines: { description: 'JSON Lines.', steps: [{ name: 'show', bash: 'cat text.txt' }], output: '{"line": 1, "text": "{show.output}"}\n{"line": 2, "text": "{show.stdout}"}\n' },
        pretty: { description: 'Two documents.', parameters: { n: { type: 'string' } }, steps: [{ name: 'show', bash: 'cat text.txt' }], output: '{\n  "text": "{show.output}"\n}\n[\n  {n}\n]' },
      });
      const lines = await r.execute('lines', {});
      expect(lines.ok, JSON.stringify(lines)).toBe(true);
      const records = (lines as { value: string }).value.trim().split('\n').map((line) => JSON.parse(line));
      expect(records).toEqual([{ line: 1, text: SPLICE }, { line: 2, text: SPLICE }]);
      // A value standing as a value is still one JSON value.
      expect(errorOf(await r.execute('pretty', { n: '1]\n{"admin": true} [' }))).toMatchObject({ code: 'FORGE_YAML_VALUE' });
      const pretty = await r.execute('pretty', { n: '7' });
      expect(pretty).toMatchObject({ ok: true, value: `{\n  "text": ${JSON.stringify(SPLICE)}\n}\n[\n  7\n]` });
    });

    it('leaves an output that only starts like JSON as plain text, its values as they are', async () => {
      const r = yamlRegistry(tempDir(), {
        t: { description: 'Text.', parameters: { level: { type: 'string' }, msg: { type: 'string' } }, sh: 'true', output: '[{level}] "{msg}"' },
        json: { description: 'JSON.', parameters: { msg: { type: 'string' } }, sh: 'true', output: '["{msg}"]' },
      });
      expect(await r.execute('t', { level: 'INFO', msg: 'a "b" \\ c' })).toMatchObject({ ok: true, value: '[INFO] "a "b" \\ c"' });
      expect(valueOf(await r.execute('json', { msg: 'a "b" \\ c' }))).toEqual(['a "b" \\ c']);
    });
  });

  it('reuses a cached step\'s result for identical inputs within one call, and only within it', async () => {
    const dir = tempDir();
    const counting = (name: string, word: string) => ({ name, bash: `echo run >> runs.txt; echo ${word}`, cache: true });
    const r = yamlRegistry(dir, {
      t: { description: 'Cached.', steps: [counting('a', 'x'), counting('b', 'x'), counting('c', 'y')], output: '{a.output}{b.output}{c.output}' },
    });
    expect(await r.execute('t', {})).toMatchObject({ ok: true, value: 'xxy' });
    expect(readFileSync(join(dir, 'runs.txt'), 'utf8')).toBe('run\nrun\n');
    await r.execute('t', {});
    expect(readFileSync(join(dir, 'runs.txt'), 'utf8')).toBe('run\n'.repeat(4));
  });

  it('runs independent steps at the same time with parallel: true, and dependent ones after', async () => {
    // Each of a and b waits for the other's file: they only finish if they run together.
    const wait = (mine: string, theirs: string) => `touch ${mine}; for i in $(seq 75); do [ -e ${theirs} ] && break; sleep 0.02; done; [ -e ${theirs} ] && echo ${mine}`;
    const tool = (parallel: boolean) => ({
      description: 'Parallel.',
      parallel,
      timeout: 10_000,
      steps: [
        { name: 'a', bash: wait('a.ready', 'b.ready') },
        { name: 'b', bash: wait('b.ready', 'a.ready') },
        { name: 'both', bash: 'echo "{a.output}+{b.output}"' },
      ],
    });
    const r = yamlRegistry(tempDir(), { together: tool(true) });
    expect(await r.execute('together', {})).toMatchObject({ ok: true, value: 'a.ready+b.ready' });
    const sequential = yamlRegistry(tempDir(), { alone: tool(false) });
    expect(errorOf(await sequential.execute('alone', {})).message).toContain('failed at step "a"');
  });

  it('stops the other parallel steps when one fails', async () => {
    const dir = tempDir();
    const r = yamlRegistry(dir, {
      t: { description: 'Parallel failure.', parallel: true, steps: [{ name: 'slow', bash: 'sleep 20; touch finished' }, { name: 'broken', bash: 'exit 1' }] },
    });
    const started = Date.now();
    expect(errorOf(await r.execute('t', {})).message).toContain('failed at step "broken"');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(existsSync(join(dir, 'finished'))).toBe(false);
  });

  it('gives commands a minimal environment plus the tool\'s own, with {PARAM} and ${VAR}', async () => {
    process.env.FORGE_TEST_PASSED = 'passed-through';
    process.env.FORGE_TEST_SECRET = 'sk-secret';
    const r = yamlRegistry(
      tempDir(),
      {
        t: {
          description: 'Environment.',
          parameters: { who: { type: 'string' } },
          environment: { GREETING: 'hello {who}', FROM_PARENT: '${FORGE_TEST_PASSED}/x', SECRET_TRY: '${FORGE_TEST_SECRET}' },
          bash: 'echo "$GREETING|$FROM_PARENT|$SECRET_TRY|${FORGE_TEST_SECRET:-unset}"',
        },
      },
      { envPassthrough: ['FORGE_TEST_PASSED'] },
    );
    expect(await r.execute('t', { who: 'Ada' })).toMatchObject({ ok: true, value: 'hello Ada|passed-through/x||unset' });
  });

  it('runs commands in working-directory, which must stay inside the work dir', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    mkdirSync(join(dir, '..cache'));
    symlinkSync(tempDir(), join(dir, 'escape'));
    const r = yamlRegistry(dir, { t: { description: 'Where.', parameters: { d: { type: 'string' } }, 'working-directory': '{d}', bash: 'pwd' } });
    expect(await r.execute('t', { d: 'sub' })).toMatchObject({ ok: true, value: join(dir, 'sub') });
    // A name that merely starts with ".." is a directory inside, not a way out.
    expect(await r.execute('t', { d: '..cache' })).toMatchObject({ ok: true, value: join(dir, '..cache') });
    expect(errorOf(await r.execute('t', { d: 'sub\0' }))).toMatchObject({ code: 'FORGE_YAML_VALUE', message: expect.stringContaining('NUL') });
    expect(errorOf(await r.execute('t', { d: '../..' }))).toMatchObject({ code: 'FORGE_YAML_VALUE', message: expect.stringContaining('outside the work dir') });
    expect(errorOf(await r.execute('t', { d: 'escape' })).message).toContain('through a symbolic link');
    expect(errorOf(await r.execute('t', { d: 'missing' })).message).toContain('does not exist');
  });

  it('kills a command that outlives the tool\'s timeout', async () => {
    const dir = tempDir();
    const r = yamlRegistry(dir, { t: { description: 'Slow.', timeout: 300, bash: 'sleep 20; touch finished' } });
    expect(errorOf(await r.execute('t', {})).code).toBe('FORGE_TOOL_TIMEOUT');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(join(dir, 'finished'))).toBe(false);
  });

  it('tells every command before it runs it (--show-command), and plans without running', async () => {
    const dir = tempDir();
    const events: CommandEvent[] = [];
    const r = yamlRegistry(
      dir,
      { t: { description: 'Shown.', parameters: { name: { type: 'string' } }, steps: [{ name: 'a', run: 'printf %s {name}' }, { name: 'b', bash: 'echo {a.output}; touch ran' }] } },
      { onCommand: (e) => events.push(e) },
    );
    await r.execute('t', { name: "O'Brien" });
    expect(events.map((e) => [e.step, e.prepared.kind === 'process' ? (e.prepared.script?.text ?? e.prepared.argv) : null])).toEqual([
      ['a', ['printf', '%s', "O'Brien"]],
      ['b', "echo 'O'\\''Brien'; touch ran"],
    ]);
    const tool = r.get('t');
    expect(isYamlTool(tool)).toBe(true);
    const planned = isYamlTool(tool) ? tool.plan({ name: 'x' }) : [];
    expect(planned.map((p) => (p.prepared?.kind === 'process' ? (p.prepared.script?.text ?? p.prepared.argv) : null))).toEqual([['printf', '%s', 'x'], "echo '<a.output>'; touch ran"]);
  });
});

describe('meta-tools: steps that call tools', () => {
  const echo = { description: 'Echo.', parameters: { text: { type: 'string' } }, python: 'print({text}.upper())' };

  it('passes its input on by default, or the args given, and names results with output_var', async () => {
    const r = yamlRegistry(tempDir(), {
      echo,
      meta: {
        description: 'Meta.',
        parameters: { text: { type: 'string' } },
        steps: [
          { name: 'whole', tool: 'echo', output_var: 'loud' },
          { name: 'again', tool: 'echo', args: { text: '{loud} and {text}' } },
          { name: 'fromJson', tool: 'echo', input: '{{"text": "{again.output}!"}}' },
        ],
      },
    });
    expect(await r.execute('meta', { text: 'hi' })).toMatchObject({ ok: true, value: 'HI AND HI!' });
  });

  it('fails with the inner tool\'s name when a called tool fails', async () => {
    const r = yamlRegistry(tempDir(), {
      broken: { description: 'Broken.', bash: 'echo "disk full" >&2; exit 1' },
      outer: { description: 'Outer.', steps: [{ name: 'call', tool: 'broken' }] },
    });
    const error = errorOf(await r.execute('outer', {}));
    expect(error.code).toBe('FORGE_YAML_STEP_FAILED');
    // Said once: the inner tool's own message already names it, and a tool of one action has no step to name.
    expect(error.message).toBe('tool "outer" failed at step "call": tool "broken" failed: exited with code 1: disk full');
  });

  it('gives a tool of one action its failure without a step name, and no continue-on-error hint (it has no steps:)', async () => {
    const r = yamlRegistry(tempDir(), { broken: { description: 'Broken.', bash: 'echo "disk full" >&2; exit 1' } });
    const error = errorOf(await r.execute('broken', {}));
    expect(error).toMatchObject({ code: 'FORGE_YAML_STEP_FAILED', message: 'tool "broken" failed: exited with code 1: disk full', details: 'disk full' });
    expect('hint' in error ? error.hint : undefined).toBeUndefined();
  });

  it("answers a step calling a tool that is gone as the meta-tool's failure, never as the meta-tool being unknown", async () => {
    const r = yamlRegistry(tempDir(), {
      helper: { description: 'Helper.', bash: 'echo hi' },
      outer: { description: 'Outer.', steps: [{ name: 'call', tool: 'helper' }] },
    });
    r.unregister('helper');
    const error = errorOf(await r.execute('outer', {}));
    expect(error.code).toBe('FORGE_YAML_STEP_FAILED');
    expect(error.message).toMatch(/^tool "outer" failed at step "call": tool "helper" failed: no tool named "helper"/);
    expect(error).toMatchObject({
      hint: 'the step calls a tool this agent does not have (removed or renamed since?): bring it back, or change the step',
      details: expect.stringMatching(/^FORGE_TOOL_UNKNOWN/),
    });
  });

  it('refuses a cycle at run time', async () => {
    const r = yamlRegistry(tempDir(), {
      ping: { description: 'Ping.', steps: [{ name: 'call', tool: 'pong' }] },
      pong: { description: 'Pong.', steps: [{ name: 'call', tool: 'ping' }] },
    });
    const error = errorOf(await r.execute('ping', {}));
    expect(error.message).toContain('tool "ping" calls itself in a cycle: ping → pong → ping');
  });

  it('refuses nesting deeper than 10 at run time', async () => {
    const tools: Record<string, Record<string, unknown>> = { level11: { description: 'Bottom.', bash: 'echo bottom' } };
    for (let i = 0; i <= 10; i++) tools[`level${i}`] = { description: `Level ${i}.`, steps: [{ name: 'down', tool: `level${i + 1}` }] };
    const r = yamlRegistry(tempDir(), tools);
    expect(await r.execute('level1', {})).toMatchObject({ ok: true, value: 'bottom' });
    expect(errorOf(await r.execute('level0', {})).message).toContain('is nested 11 calls deep');
  });
});

describe('YAML tools for other platforms', () => {
  it('are left out of the registry with a warning, not an error', () => {
    const dir = tempDir();
    const other = currentPlatform() === 'windows' ? 'linux' : 'windows';
    writeFileSync(join(dir, 'elsewhere.yaml'), `description: Elsewhere.\nplatforms: [${other}]\nbash: echo hi\n`);
    writeFileSync(join(dir, 'here.yaml'), `description: Here.\nplatforms: [${currentPlatform()}]\nbash: echo hi\n`);
    const spec = (name: string) => ({ name, description: name, category: 'custom' as const, inputSchema: { type: 'object' }, tags: [], source: { kind: 'yaml' as const, path: `${name}.yaml`, sha256: 'x' } });
    const { registry, diagnostics } = createRegistry(
      [spec('elsewhere'), spec('here')],
      {
        builtins: {},
        yaml: createYamlToolFactory({ workDir: dir }),
        custom: { workDir: dir, resolveSource: (p) => join(dir, p), node: { worker: async () => ({ command: '', args: [] }), script: async () => ({ command: '', args: [] }) } },
      },
      (s) => s.name,
    );
    expect(registry.list().map((t) => t.name)).toEqual(['here']);
    expect(diagnostics).toMatchObject([{ severity: 'warning', code: 'FORGE_TOOL_PLATFORM', message: `tool "elsewhere" runs on ${other}, not on ${currentPlatform()}` }]);
  });
});

describe('a python: step that fails with a Python error', () => {
  async function runFile(yaml: string, args: Record<string, unknown>) {
    const dir = tempDir();
    mkdirSync(join(dir, 'tools'));
    writeFileSync(join(dir, 'tools', 't.yaml'), yaml);
    const spec = { name: 't', description: 'T.', category: 'custom' as const, inputSchema: { type: 'object' }, tags: ['read'], source: { kind: 'yaml' as const, path: 'tools/t.yaml', sha256: '' } };
    const { registry } = createRegistry([spec], { builtins: {}, yaml: createYamlToolFactory({ workDir: dir }), custom: { workDir: dir, resolveSource: (p) => join(dir, p), node: { worker: async () => ({ command: '', args: [] }), script: async () => ({ command: '', args: [] }) } } }, (s) => s.name);
    const result = await registry.execute('t', args);
    errorOf(result);
    return result.ok ? { message: '', details: '', hint: '' } : result.error;
  }

  it('names the line of the YAML file, in the message and the traceback (a value with newlines does not shift it)', async () => {
    const error = await runFile("description: T.\nparameters:\n  text: { type: string, default: \"a\\nb\\nc\" }\nsteps:\n  - name: first\n    bash: echo hi\n  - name: divide\n    python: |\n      s = '''{text}'''\n      def f(d):\n          return 1 / d\n      print(f(0))\n", { text: 'a\nb\nc' });
    expect(error.message).toMatch(/^tool "t" failed at step "divide" \(tools\/t\.yaml:11, line 3 of the python: script\): exited with code 1/);
    expect(error.details).toContain('File "tools/t.yaml", line 12 (line 4 of the python: script), in <module>');
    expect(error.details).not.toContain('/tmp/');
    expect(error.hint).toContain('continue-on-error');
  });

  it('says a script that does not compile does not compile, where, without the continue-on-error hint', async () => {
    const error = await runFile('description: T.\nparameters:\n  code: { type: string, default: "x = (" }\nsteps:\n  - name: first\n    bash: echo hi\n  - name: broken\n    python: |\n      {RAW:code}\n      print(1)\n', { code: 'x = (' });
    expect(error.message).toBe('tool "t" failed at step "broken": its python: script does not compile (tools/t.yaml:9, line 1 of the python: script)');
    expect(error.hint).not.toContain('continue-on-error');
  });
});
