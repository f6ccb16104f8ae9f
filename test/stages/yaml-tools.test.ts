/**
 * YAML tools in the build: diagnostics at file:line:column, what agent.json
 * records, dependencies resolved across scopes with semver, and cycles and
 * depth refused before anything ships.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { loadProject } from '../../stages/load-project.ts';
import { build } from '../../stages/pipeline.ts';
import { StageContext } from '../../stages/stage.ts';
import { minimalConfig, tempDir, writeProject } from '../helpers/project.ts';

let home: string;
let global: string;
const saved = { home: process.env.FORGE_HOME, global: process.env.FORGE_GLOBAL_TOOLS };
beforeEach(() => {
  home = tempDir('forge-home-');
  global = tempDir('forge-global-');
  process.env.FORGE_HOME = home;
  process.env.FORGE_GLOBAL_TOOLS = global;
});
afterEach(() => {
  process.env.FORGE_HOME = saved.home;
  process.env.FORGE_GLOBAL_TOOLS = saved.global;
});

function scopeTool(scope: 'user' | 'global', file: string, text: string) {
  const dir = scope === 'user' ? join(home, 'tools') : global;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, file), text);
}

const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, '.forge-output', 'agent.json'), 'utf8')) as AgentManifest;
const messages = (result: Awaited<ReturnType<typeof build>>) => result.errors.map((e) => `${e.file}:${e.line}:${e.column} ${e.code} ${e.message}`);

const SHOUT = 'description: Shouts.\nversion: 1.4.0\ntags: [read]\nparameters:\n  text: { type: string }\nbash: printf %s {text} | tr a-z A-Z\n';

describe('YAML tools in forge build', () => {
  it('records YAML tools in agent.json with their schema, tags, composedOf and source, and ships the files', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/shout.yaml': SHOUT,
      'tools/count.yaml': 'description: Counts.\ntags: [read]\nparameters:\n  text: { type: string }\npython: |\n  print(len({text}))\n',
      'tools/loud_count.yml': 'description: Shouts, then counts.\ntags: [read]\natomic: true\nparameters:\n  text: { type: string }\nsteps:\n  - name: loud\n    tool: shout\n  - name: n\n    tool: count\n    args: { text: "{loud.output}" }\n',
      'tools/data/words.yaml': 'words: [a, b]\n',
    });
    const result = await build({ cwd: dir, prod: true });
    expect(result.errors).toEqual([]);
    const manifest = manifestOf(dir);
    const loud = manifest.tools.find((t) => t.name === 'loud_count')!;
    expect(loud).toMatchObject({
      category: 'custom',
      tags: ['read'],
      composedOf: ['shout', 'count'],
      singleConfirmation: true,
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      source: { kind: 'yaml', path: 'tools/loud_count.yml' },
    });
    expect(manifest.tools.find((t) => t.name === 'count')!.source).toMatchObject({ kind: 'yaml', interpreters: ['python'] });
    expect(manifest.requirements.python).toBeDefined();
    for (const file of ['tools/shout.yaml', 'tools/count.yaml', 'tools/loud_count.yml', 'tools/data/words.yaml']) expect(existsSync(join(dir, '.forge-output', file)), file).toBe(true);
    expect(readFileSync(join(dir, '.forge-output', 'forge-runtime.cjs'), 'utf8')).toContain('YAML');
  });

  it('leaves the YAML parser out of a bundle without YAML tools', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/t.py': '"""\nTool: t\nDescription: d\n"""\nprint(1)\n' });
    expect((await build({ cwd: dir })).errors).toEqual([]);
    expect(readFileSync(join(dir, '.forge-output', 'runtime.mjs'), 'utf8')).not.toContain('createYamlToolFactory');
  });

  it('reports problems in YAML tools at file:line:column, and warns about each RAW placeholder', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/bad.yaml': 'description: Bad.\nparameters:\n  name: { type: string }\nbash: |\n  echo ok\n  echo `{name}` {nmae}\n',
      'tools/typo.yaml': 'description: Typo.\ntgas: [read]\nbash: echo\n',
      'tools/raw.yaml': 'description: Raw.\nparameters:\n  cmd: { type: string }\nsh: "{RAW:cmd}"\n',
    });
    const result = await build({ cwd: dir });
    expect(result.ok).toBe(false);
    expect(messages(result)).toEqual([
      'tools/bad.yaml:6:9 FORGE_YAML_PLACEHOLDER placeholder {name} stands inside backticks, where no escaping keeps its value literal',
      'tools/bad.yaml:6:17 FORGE_YAML_REFERENCE {nmae} names no parameter, step or output_var',
      'tools/typo.yaml:2:1 FORGE_YAML_UNKNOWN_FIELD unknown field "tgas"',
    ]);
    expect(result.errors[2].hint).toBe('did you mean "tags"?');
    expect(result.warnings.map((w) => `${w.file}:${w.line}:${w.column} ${w.code}`)).toEqual(['tools/raw.yaml:4:6 FORGE_YAML_RAW']);
  });

  it('builds with RAW warnings and nothing else wrong', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/raw.yaml': 'description: Raw.\nparameters:\n  cmd: { type: string }\nsh: "{RAW:cmd}"\n' });
    const result = await build({ cwd: dir });
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => w.code)).toEqual(['FORGE_YAML_RAW']);
  });

  it('refuses a cycle of tool calls at build time, printing it', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/a.yaml': 'description: A.\nsteps:\n  - tool: b\n',
      'tools/b.yaml': 'description: B.\nsteps:\n  - tool: c\n',
      'tools/c.ts': '/**\n * Tool: c\n * Description: C.\n * Composed Of: a\n */\nexport async function execute(args, ctx) { return ctx.registry.execute("a", {}); }\n',
    });
    const result = await build({ cwd: dir });
    expect(result.ok).toBe(false);
    expect(result.errors.map((e) => e.message)).toEqual(['tools call each other in a cycle: a → b → c → a']);
    expect(result.errors[0]).toMatchObject({ code: 'FORGE_TOOL_CYCLE', file: 'tools/c.ts' });
  });

  it('refuses nesting deeper than 10 at build time, printing the chain', async () => {
    const files: Record<string, string> = { 'forge.yaml': minimalConfig(), 'tools/t11.yaml': 'description: Bottom.\nbash: echo\n' };
    for (let i = 0; i <= 10; i++) files[`tools/t${i}.yaml`] = `description: Level ${i}.\nsteps:\n  - tool: t${i + 1}\n`;
    const dir = writeProject(files);
    const result = await build({ cwd: dir });
    expect(result.errors).toMatchObject([{ code: 'FORGE_TOOL_DEPTH', file: 'tools/t0.yaml', line: 3, message: expect.stringContaining('t0 → t1 → t2 → t3 → t4 → t5 → t6 → t7 → t8 → t9 → t10 → t11') }]);
  });

  it("refuses a step whose args do not fit the tool it calls: a name it does not take, a required one missing, a literal of the wrong type", async () => {
    const shout = 'description: Shout.\nparameters:\n  txt: { type: string, description: Text. }\n  times: { type: integer, description: Times., default: 1 }\nbash: echo {txt}\n';
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/shout.yaml': shout,
      'tools/extra.yaml': 'description: Extra.\nparameters:\n  word: { type: string, description: W. }\nsteps:\n  - tool: shout\n    args: { txt: "{word}", volume: 11 }\n',
      'tools/missing.yaml': 'description: Missing.\nsteps:\n  - tool: shout\n    args: { times: 2 }\n',
      'tools/typed.yaml': 'description: Typed.\nsteps:\n  - tool: shout\n    args: { txt: hi, times: lots }\n',
      // Filled from a placeholder, or literal and right: nothing to say.
      'tools/fine.yaml': 'description: Fine.\nparameters:\n  n: { type: integer, description: N. }\nsteps:\n  - tool: shout\n    args: { txt: hi, times: "{n}" }\n  - tool: shout\n    args: { txt: hi, times: 3 }\n',
    });
    const result = await build({ cwd: dir });
    expect(result.errors.map((e) => `${e.file}:${e.line}:${e.column} ${e.code} ${e.message}`).sort()).toEqual([
      'tools/extra.yaml:6:36 FORGE_STEP_ARGS step "step1" passes "volume", which "shout" does not take',
      'tools/missing.yaml:4:11 FORGE_STEP_ARGS step "step1" does not pass "txt", which "shout" needs',
      'tools/typed.yaml:4:29 FORGE_STEP_ARGS step "step1" passes times="lots" to "shout": argument "times" must be an integer (got "lots")',
    ]);
    expect(result.errors[0].hint).toBe('"shout" takes: txt, times');
  });

  it('names the argument a misspelt one likely is', async () => {
    const shout = 'description: Shout.\nparameters:\n  txt: { type: string, description: Text. }\n  times: { type: integer, description: Times., default: 1 }\nbash: echo {txt}\n';
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/shout.yaml': shout,
      'tools/typo.yaml': 'description: Typo.\nsteps:\n  - tool: shout\n    args: { txt: hi, tims: 2 }\n',
    });
    const result = await build({ cwd: dir });
    expect(result.errors.map((e) => ({ at: `${e.file}:${e.line}:${e.column}`, message: e.message, hint: e.hint }))).toEqual([
      { at: 'tools/typo.yaml:4:28', message: 'step "step1" passes "tims", which "shout" does not take', hint: 'did you mean "times"? "shout" takes: txt, times' },
    ]);
  });

  it('refuses a production build where a tool calls a dev tool', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/probe.yaml': 'description: Dev probe.\ncategory: dev\nbash: echo\n',
      'tools/uses.yaml': 'description: Uses the probe.\nsteps:\n  - tool: probe\n',
    });
    expect((await build({ cwd: dir })).ok).toBe(true);
    const prod = await build({ cwd: dir, prod: true });
    expect(prod.errors).toMatchObject([{ code: 'FORGE_TOOL_DEV_DEPENDENCY', message: 'tool "uses" calls the dev tool "probe", which a --prod build leaves out' }]);
  });
});

describe('dependencies across scopes', () => {
  const meta = (deps: string, step = 'shout') => `description: Meta.\ntags: [read]\ndependencies: [${deps}]\nparameters:\n  text: { type: string }\nsteps:\n  - name: call\n    tool: ${step}\n`;

  it('brings a user-scope tool into the bundle under tools/@user/', async () => {
    scopeTool('user', 'shout.yaml', SHOUT);
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/meta.yaml': meta('shout@^1.0.0') });
    const result = await build({ cwd: dir, prod: true });
    expect(result.errors).toEqual([]);
    const shout = manifestOf(dir).tools.find((t) => t.name === 'shout');
    expect(shout?.source).toMatchObject({ kind: 'yaml', path: 'tools/@user/shout.yaml' });
    expect(readFileSync(join(dir, '.forge-output', 'tools/@user/shout.yaml'), 'utf8')).toBe(SHOUT);
  });

  it('prefers the project, then the user scope, then the global scope, unless a scope is named', async () => {
    scopeTool('user', 'shout.yaml', SHOUT);
    scopeTool('global', 'shout.yaml', SHOUT.replace('1.4.0', '2.0.0'));
    scopeTool('global', 'whisper.yaml', 'description: Whispers.\nversion: 0.1.0\nbash: echo\n');
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/meta.yaml': meta('whisper', 'shout') });
    await build({ cwd: dir });
    const sources = Object.fromEntries(manifestOf(dir).tools.map((t) => [t.name, t.source?.path]));
    expect(sources).toMatchObject({ shout: 'tools/@user/shout.yaml', whisper: 'tools/@global/whisper.yaml' });

    const explicit = writeProject({ 'forge.yaml': minimalConfig(), 'tools/meta.yaml': meta('global/shout@^2.0.0', 'global/shout') });
    expect((await build({ cwd: explicit })).errors).toEqual([]);
    expect(manifestOf(explicit).tools.find((t) => t.name === 'shout')?.source?.path).toBe('tools/@global/shout.yaml');
  });

  it('reports a missing dependency with the chain that needs it', async () => {
    scopeTool('user', 'digest.yaml', 'description: Digest.\nsteps:\n  - tool: summarize\n');
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/meta.yaml': meta('digest', 'digest') });
    const result = await build({ cwd: dir });
    expect(result.errors).toMatchObject([
      { code: 'FORGE_TOOL_DEPENDENCY', message: 'meta → digest → summarize: no scope has a tool named "summarize"', hint: expect.stringContaining('forge tool add summarize') },
    ]);
    expect(result.errors[0].file).toContain('digest.yaml');
  });

  it('reports a misspelt Composed Of: name where it is written, with the name it most likely means', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/price_quote.yaml': 'description: Prices.\nbash: echo 1\n',
      'tools/quote_total.ts': '/**\n * Tool: quote_total\n * Description: Totals a quote.\n * Composed Of: price_quote,\n *   price_qoute\n */\nexport async function execute(args, ctx) { return ctx.registry.execute("price_quote", {}); }\n',
    });
    const result = await build({ cwd: dir });
    expect(messages(result)).toEqual(['tools/quote_total.ts:5:6 FORGE_TOOL_DEPENDENCY quote_total → price_qoute: no scope has a tool named "price_qoute"']);
    expect(result.errors[0].hint).toMatch(/^did you mean "price_quote"\?/);
    expect(result.errors[0].hint).not.toContain('forge tool add');
  });

  it('says a tool whose file declares the name but does not load is there, broken (not missing)', async () => {
    // A type typo in shout.py's docstring: the file does not load, and card calls shout.
    const shout = '"""\nTool: shout\nDescription: Shouts.\nTags: read\n\nInput:\n  text (str): The text.\n  times (integr, default=1): How often.\n"""\ndef execute(args):\n    return args["text"].upper()\n';
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/shout.py': shout, 'tools/card.yaml': meta('', 'shout').replace('dependencies: []\n', '') });
    // As forge tool run and forge tool check load it: one broken file does not stop the others.
    const ctx = new StageContext(dir, false);
    await loadProject({ configFile: join(dir, 'forge.yaml') }, ctx);
    const errors = ctx.diagnostics.filter((d) => d.severity === 'error');
    const dependency = errors.filter((e) => e.code === 'FORGE_TOOL_DEPENDENCY');
    expect(dependency).toMatchObject([{ message: 'card → shout: tools/shout.py defines it but does not load (see its error)', file: 'tools/card.yaml' }]);
    expect(dependency[0].hint).not.toContain('forge tool add');
    // Its own error is reported as well.
    expect(errors.some((e) => e.code !== 'FORGE_TOOL_DEPENDENCY' && e.file === 'tools/shout.py')).toBe(true);
  });

  it('reports an unsatisfied version, and where a version that satisfies it is', async () => {
    scopeTool('global', 'shout.yaml', SHOUT.replace('1.4.0', '2.1.0'));
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/shout.yaml': SHOUT, 'tools/meta.yaml': meta('shout@^2.0.0') });
    const result = await build({ cwd: dir });
    expect(result.errors).toMatchObject([
      {
        code: 'FORGE_TOOL_DEPENDENCY',
        file: 'tools/meta.yaml',
        line: 3,
        message: 'meta → shout@^2.0.0: local/shout is 1.4.0 (tools/shout.yaml), which does not satisfy ^2.0.0',
        hint: expect.stringContaining('global/shout 2.1.0'),
      },
    ]);
  });

  it.each([
    ['a tool shipped with Forge that is not enabled', 'uuid_generate', 'ships with Forge: enable it under tools: in forge.yaml'],
    ['an invalid range', 'shout@^^1', 'not a semver range'],
    ['an unknown scope', 'team/shout', 'unknown scope "team"'],
  ])('reports %s', async (_what, dep, text) => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/shout.yaml': SHOUT, 'tools/meta.yaml': meta(dep) });
    const result = await build({ cwd: dir });
    expect(result.ok).toBe(false);
    expect(result.errors.map((e) => `${e.message} ${e.hint ?? ''}`).join('\n')).toContain(text);
  });

  it('refuses a scope tool whose name a project tool already has', async () => {
    scopeTool('user', 'shout.yaml', SHOUT);
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/shout.yaml': SHOUT, 'tools/meta.yaml': meta('user/shout', 'user/shout') });
    const result = await build({ cwd: dir });
    const collision = result.errors.find((e) => e.code === 'FORGE_TOOL_COLLISION');
    // At the reference that brings it in; both definitions are notes with their own locations.
    expect(collision).toMatchObject({ message: 'tool "shout" is defined twice', file: 'tools/meta.yaml' });
    expect(collision!.notes).toMatchObject([
      { text: 'first defined here', file: 'tools/shout.yaml' },
      { text: expect.stringContaining('in the user scope (user/shout, needed by meta)'), file: expect.stringMatching(/shout\.yaml$/) },
    ]);
  });
});
