/** `forge run --dev` hot reload in a real process: every way an editor saves, new folders, deletes, and tools that stop loading. */
import { mkdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { forgeBin, minimalConfig, tempDir, writeProject } from '../helpers/project.ts';
import { addNumbers, calcJson } from '../helpers/forge-requests.ts';

const versioned = (name: string, version: number) =>
  `"""\nTool: ${name}\nDescription: Says which version it is.\nTags: read\n"""\n\ndef execute(args):\n    return {"version": ${version}}\n`;
const yamlTool = (name: string, word: string) => `name: ${name}\ndescription: Echo a word.\ntags: [read]\nsteps:\n  - run: echo ${word}\n`;

const devServer = (project: string) => startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: project });
const post = async (url: string, tool: string, args: unknown = {}) => {
  const res = await fetch(`${url}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
  return { status: res.status, body: (await res.json()) as any };
};
const names = async (url: string): Promise<string[]> => ((await (await fetch(`${url}/tools`)).json()) as { tools: { name: string }[] }).tools.map((t) => t.name);

/** Polls until `probe` holds (the reload is asynchronous; its end is what the test waits for, never a fixed sleep). */
async function until(probe: () => Promise<boolean>, what: string, agent: AgentProcess, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; server output:\n${agent.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Each of the ways editors write a file. */
const saves = {
  inPlace: (file: string, text: string) => writeFileSync(file, text),
  renameOver: (file: string, text: string) => {
    const temp = `${file}.forge-tmp-${process.pid}`;
    writeFileSync(temp, text);
    renameSync(temp, file);
  },
  deleteAndRecreate: (file: string, text: string) => {
    unlinkSync(file);
    writeFileSync(file, text);
  },
};

describe('forge run --dev hot reload', () => {
  it('sees every one of 50 saves made in place, by rename-over, and by delete and re-create', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/counter.py': versioned('counter', 0), 'tools/other.py': versioned('other', 0) });
    const agent = await devServer(project);
    try {
      expect((await post(agent.url, 'counter')).body.value).toEqual({ version: 0 });
      const styles = Object.values(saves);
      for (let version = 1; version <= 50; version++) {
        styles[version % styles.length](join(project, 'tools/counter.py'), versioned('counter', version));
        await until(async () => (await post(agent.url, 'counter')).body.value?.version === version, `counter version ${version}`, agent);
        // Once the new version answers, every later call gets it too.
        expect((await post(agent.url, 'counter')).body.value).toEqual({ version });
      }
      // Only the edited tool was ever reloaded.
      expect(agent.output()).not.toMatch(/reloaded [^\n]*other/);
      expect(agent.child.exitCode).toBeNull();
    } finally {
      await agent.stop();
    }
  }, 300_000);

  const versionedTs = (name: string, version: number) =>
    `/**\n * Tool: ${name}\n * Description: Says which version it is.\n * Tags: read\n */\nexport function execute() {\n  return { version: ${version} };\n}\n`;

  it.each([
    ['Python', 'py', versioned],
    ['TypeScript', 'ts', versionedTs],
  ] as const)('removes a deleted %s tool without reloading the other tools of its language (a tool file is no helper module)', async (_language, ext, source) => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), [`tools/gone.${ext}`]: source('gone', 1), [`tools/other.${ext}`]: source('other', 1) });
    const agent = await devServer(project);
    try {
      expect((await post(agent.url, 'other')).body.value).toEqual({ version: 1 });
      unlinkSync(join(project, `tools/gone.${ext}`));
      await agent.waitFor(/removed gone\n/);
      expect(agent.output()).not.toMatch(/reloaded [^\n]*other/);
      expect(await names(agent.url)).toEqual(['other']);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('reloads the edited tool and the meta-tools that compose it, and nothing else', async () => {
    const meta = 'description: Wraps base.\ntags: [read]\nsteps:\n  - tool: base\n';
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/base.py': versioned('base', 1), 'tools/meta.yaml': meta, 'tools/other.yaml': yamlTool('other', 'x') });
    const agent = await devServer(project);
    try {
      saves.renameOver(join(project, 'tools/base.py'), versioned('base', 2));
      await agent.waitFor(/tools reloaded (base, meta|meta, base)\n/);
      expect(agent.output()).not.toMatch(/reloaded [^\n]*other/);
      await until(async () => (await post(agent.url, 'meta')).body.value?.version === 2, 'meta seeing base version 2', agent);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('leaves tools that declare Output:, Timeout: or compose others alone when another tool changes, and reloads nothing at start', async () => {
    const declared = `"""\nTool: declared\nDescription: Declares its output and timeout.\nTags: read\nTimeout: 5s\n\nOutput:\n  version (int): Which version.\n"""\n\ndef execute(args):\n    return {"version": 1}\n`;
    const typed = `/**\n * Tool: typed\n * Description: Declares its output.\n * Tags: read\n *\n * Output:\n *   ok (bool): Always true.\n */\nexport function execute() {\n  return { ok: true };\n}\n`;
    const meta = 'description: Wraps declared.\ntags: [read]\nsteps:\n  - tool: declared\n';
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/base.py': versioned('base', 1), 'tools/declared.py': declared, 'tools/typed.ts': typed, 'tools/meta.yaml': meta });
    const agent = await devServer(project);
    try {
      expect((await post(agent.url, 'typed')).body.value).toEqual({ ok: true });
      saves.inPlace(join(project, 'tools/base.py'), versioned('base', 2));
      await agent.waitFor(/tools reloaded base\n/);
      expect(agent.output().match(/tools reloaded[^\n]*/g)).toEqual(['tools reloaded base']);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it("keeps a session's forged tool out of the open agent card after a reload", async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools: [math_calculate]\nemergent: { timeout: 3 }\n'), 'tools/base.py': versioned('base', 1) });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: project, env: { FORGE_MCP_SESSIONS: 'stateful' } });
    const client = new Client({ name: 'forger', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`)));
      const forged = await client.callTool({ name: 'forge_tool', arguments: { ...addNumbers, description: 'SECRET of one MCP session.' } });
      expect(JSON.parse((forged.content as { text: string }[])[0].text)).toMatchObject({ success: true, tier: 'session' });
      saves.inPlace(join(project, 'tools/base.py'), versioned('base', 2));
      await agent.waitFor(/tools reloaded base\n/);
      const card = await (await fetch(`${agent.url}/.well-known/agent-card.json`)).text();
      expect(card).toContain('"base"');
      expect(card).not.toContain('add_numbers');
      expect(card).not.toContain('SECRET');
    } finally {
      await client.close();
      await agent.stop();
    }
  }, 120_000);

  it("keeps forged tools across a forge.yaml save without warning that their names are taken, and stops serving those a narrowed emergent.allow_tools no longer allows", async () => {
    const config = (emergent: string) => minimalConfig(`tools: [math_calculate, json_parse]\nemergent: { timeout: 3${emergent} }\n`);
    const project = writeProject({ 'forge.yaml': config(''), 'tools/base.py': versioned('base', 1) });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: project, env: { FORGE_MCP_SESSIONS: 'stateful' } });
    const client = new Client({ name: 'forger', version: '1.0.0' });
    const call = async (name: string, args: unknown) => {
      const result = await client.callTool({ name, arguments: args as Record<string, unknown> });
      return { isError: result.isError, text: (result.content as { text: string }[])[0].text };
    };
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`)));
      for (const request of [addNumbers, calcJson]) expect(JSON.parse((await call('forge_tool', request)).text)).toMatchObject({ success: true });
      // A save that changes emergent: makes forge_tool again, which restores the store over the tools the registry already holds.
      saves.inPlace(join(project, 'forge.yaml'), config(', calls_per_minute: 5'));
      await agent.waitFor(/tools reloaded forge_tool\n/);
      // Said as it is: the quotas and allow_tools hold at once, not after a restart.
      expect(agent.output()).toContain('forge.yaml: emergent changed; allow_tools, max_tools and the quotas hold from now on');
      expect(agent.output()).not.toMatch(/emergent changed; this server still runs with the old one/);
      expect(JSON.parse((await call('calc_json', { expression: '6*7' })).text)).toEqual({ result: 42 });
      // Checked after a call the server answered since: the restore runs in a microtask, and its warnings may come after the reload's line.
      expect(agent.output()).not.toContain('is not registered');

      saves.inPlace(join(project, 'forge.yaml'), config(', allow_tools: [json_parse]'));
      await agent.waitFor('forged tool calc_json is no longer served: it uses "math_calculate", which emergent.allow_tools (json_parse) does not allow\n');
      expect((await call('calc_json', { expression: '6*7' })).isError).toBe(true);
      expect(JSON.parse((await call('add_numbers', { a: 1, b: 2 })).text)).toEqual({ sum: 3 });
      expect(agent.output()).not.toContain('another tool has its name');
    } finally {
      await client.close();
      await agent.stop();
    }
  }, 120_000);

  it('picks up a tool in a new folder, and drops a deleted one', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/first.yaml': yamlTool('first', 'one') });
    const agent = await devServer(project);
    try {
      mkdirSync(join(project, 'tools/nested/deeper'), { recursive: true });
      writeFileSync(join(project, 'tools/nested/deeper/second.yaml'), yamlTool('second', 'two'));
      await agent.waitFor('added second');
      expect((await post(agent.url, 'second')).body.value).toBe('two');
      // After a rename-over save inside the new folder, later edits are still seen.
      saves.renameOver(join(project, 'tools/nested/deeper/second.yaml'), yamlTool('second', 'three'));
      await until(async () => (await post(agent.url, 'second')).body.value === 'three', 'second saying three', agent);
      saves.inPlace(join(project, 'tools/nested/deeper/second.yaml'), yamlTool('second', 'four'));
      await until(async () => (await post(agent.url, 'second')).body.value === 'four', 'second saying four', agent);

      rmSync(join(project, 'tools/nested'), { recursive: true });
      await agent.waitFor('removed second');
      expect(await names(agent.url)).toEqual(['first']);
      expect((await post(agent.url, 'second')).status).toBe(404);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it.each(['folder → file → folder', 'file → folder'] as const)('serves the tools of tools/lib after it goes %s at once, and sees later saves in it and its sub-folders', async (steps) => {
    const lib: Record<string, string> = steps === 'file → folder' ? { 'tools/lib': 'not a tool' } : { 'tools/lib/inner.yaml': yamlTool('inner', 'one') };
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/first.yaml': yamlTool('first', 'one'), ...lib });
    const folder = join(project, 'tools/lib');
    const agent = await devServer(project);
    try {
      if (steps === 'folder → file → folder') {
        rmSync(folder, { recursive: true });
        writeFileSync(folder, 'not a tool');
      }
      rmSync(folder);
      mkdirSync(folder);
      saves.renameOver(join(folder, 'inner.yaml'), yamlTool('inner', 'two'));
      await until(async () => (await post(agent.url, 'inner')).body.value === 'two', 'inner saying two', agent);
      mkdirSync(join(folder, 'sub'));
      saves.renameOver(join(folder, 'sub', 'deep.yaml'), yamlTool('deep', 'one'));
      await until(async () => (await post(agent.url, 'deep')).body.value === 'one', 'deep saying one', agent);
      // The saves a person makes next: seen only if the folder made again is watched.
      saves.renameOver(join(folder, 'sub', 'deep.yaml'), yamlTool('deep', 'two'));
      await until(async () => (await post(agent.url, 'deep')).body.value === 'two', 'deep saying two', agent);
      saves.renameOver(join(folder, 'inner.yaml'), yamlTool('inner', 'three'));
      await until(async () => (await post(agent.url, 'inner')).body.value === 'three', 'inner saying three', agent);
      expect((await names(agent.url)).sort()).toEqual(['deep', 'first', 'inner']);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('sees saves in a sub-folder made while a folder moved in with many files is still being read, in each of 15 rounds', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/first.yaml': yamlTool('first', 'one') });
    const elsewhere = tempDir('forge-staged-');
    const agent = await devServer(project);
    try {
      for (let round = 0; round < 15; round++) {
        // A folder made elsewhere and moved in whole, as a checkout or an unpacked archive: the watcher takes a
        // while to read its files, and a sub-folder made meanwhile must still be watched.
        const staged = join(elsewhere, `package-${round}`);
        mkdirSync(staged);
        for (let n = 0; n < 300; n++) writeFileSync(join(staged, `notes-${n}.txt`), '');
        const folder = join(project, 'tools', `package-${round}`);
        const tool = `round${round}`;
        const file = join(folder, 'sub', `${tool}.yaml`);
        renameSync(staged, folder);
        // A different moment of the read in each round (a place in it, not a duration anything waits for).
        await new Promise((r) => setTimeout(r, round % 10));
        mkdirSync(join(folder, 'sub'));
        saves.renameOver(file, yamlTool(tool, 'one'));
        await until(async () => (await post(agent.url, tool)).body.value === 'one', `round ${round}: ${tool} saying one`, agent);
        // The save a person makes next: seen only if the sub-folder is watched.
        saves.renameOver(file, yamlTool(tool, 'two'));
        await until(async () => (await post(agent.url, tool)).body.value === 'two', `round ${round}: ${tool} saying two`, agent);
        rmSync(folder, { recursive: true });
        await until(async () => !(await names(agent.url)).includes(tool), `round ${round}: ${tool} removed`, agent);
      }
      expect(await names(agent.url)).toEqual(['first']);
      expect(agent.child.exitCode).toBeNull();
    } finally {
      await agent.stop();
    }
  }, 600_000);

  it('keeps a tool that stops loading listed; calls answer with its diagnostic (REST 503, MCP error) until it is fixed', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': versioned('greet', 1) });
    const agent = await devServer(project);
    const client = new Client({ name: 'test', version: '1.0.0' });
    try {
      saves.renameOver(join(project, 'tools/greet.py'), versioned('greet', 2).replace('Tags: read', 'Tags: read\nInput:\n  city (strng): A city.'));
      await agent.waitFor('cannot load greet');
      expect(await names(agent.url)).toEqual(['greet']);
      const rest = await post(agent.url, 'greet', { anything: 1 });
      expect(rest.status).toBe(503);
      expect(rest.body.error.code).toBe('FORGE_TOOL_UNAVAILABLE');
      expect(rest.body.error.message).toMatch(/tools\/greet\.py:\d+(:\d+)? FORGE_DOCSTRING_\w+ .*strng/);
      // The diagnostic's hint is the answer's hint, not repeated in its message.
      expect(rest.body.error.hint).toBe('did you mean "string"?');
      expect(rest.body.error.message).not.toContain('did you mean');

      await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`)));
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toContain('greet');
      const mcp = (await client.callTool({ name: 'greet', arguments: {} })) as { isError?: boolean; content: { text: string }[] };
      expect(mcp.isError).toBe(true);
      expect(mcp.content[0].text).toContain('strng');

      saves.inPlace(join(project, 'tools/greet.py'), versioned('greet', 3));
      await until(async () => (await post(agent.url, 'greet')).body.value?.version === 3, 'greet fixed', agent);
    } finally {
      await client.close();
      await agent.stop();
    }
  }, 120_000);

  it('treats a tool file that stops compiling (Python, TypeScript) as one that stops loading, at start and after a save', async () => {
    const typed = (body: string) => `/**\n * Tool: typed\n * Description: Says ok.\n * Tags: read\n */\nexport function execute() {\n  ${body}\n}\n`;
    const project = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/greet.py': versioned('greet', 1),
      'tools/typed.ts': typed('return { ok: true };'),
      'tools/early.py': versioned('early', 1).replace('def execute(args):', 'def execute(args)'),
    });
    const agent = await devServer(project);
    try {
      await agent.waitFor('cannot load early');
      const early = await post(agent.url, 'early');
      expect(early.status).toBe(503);
      expect(early.body.error.message).toMatch(/tools\/early\.py:\d+:\d+ FORGE_PY_SYNTAX/);
      // The person at the terminal is shown where, with the line, as for any other diagnostic.
      expect(agent.output()).toMatch(/✘ tools\/early\.py:\d+:\d+ FORGE_PY_SYNTAX .*\n +\d+ │ def execute\(args\)\n/);

      saves.inPlace(join(project, 'tools/greet.py'), versioned('greet', 2).replace('def execute(args):', 'def execute(args)'));
      saves.inPlace(join(project, 'tools/typed.ts'), typed('return { ok: true ;'));
      await until(async () => (await post(agent.url, 'greet')).status === 503 && (await post(agent.url, 'typed')).status === 503, 'both tools unavailable', agent);
      expect((await post(agent.url, 'greet')).body.error).toMatchObject({ code: 'FORGE_TOOL_UNAVAILABLE', message: expect.stringMatching(/tools\/greet\.py:\d+:\d+ FORGE_PY_SYNTAX/) });
      expect((await post(agent.url, 'typed')).body.error).toMatchObject({ code: 'FORGE_TOOL_UNAVAILABLE', message: expect.stringMatching(/tools\/typed\.ts:\d+:\d+ FORGE_SYNTAX/) });
      expect(await names(agent.url)).toEqual(['early', 'greet', 'typed']);
      expect(agent.output()).toMatch(/✘ tools\/typed\.ts:7:21 FORGE_SYNTAX .*\n +7 │ +return \{ ok: true ;\n/);

      saves.inPlace(join(project, 'tools/greet.py'), versioned('greet', 3));
      saves.inPlace(join(project, 'tools/typed.ts'), typed('return { ok: true };'));
      await until(async () => (await post(agent.url, 'greet')).body.value?.version === 3 && (await post(agent.url, 'typed')).body.value?.ok === true, 'both fixed', agent);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it("treats a TS tool whose import a save breaks as one that stops loading, with the import's place, until it resolves again", async () => {
    const typed = (from: string) => `/**\n * Tool: typed\n * Description: Pads a word.\n * Tags: read\n */\nimport pad from '${from}';\n\nexport function execute() {\n  return { word: pad('hi') };\n}\n`;
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/typed.ts': typed('./pad.ts'), 'tools/pad.ts': "export default (word: string) => ` ${word} `;\n" });
    const agent = await devServer(project);
    try {
      expect((await post(agent.url, 'typed')).body.value).toEqual({ word: ' hi ' });
      saves.inPlace(join(project, 'tools/typed.ts'), typed('no-such-pkg'));
      await until(async () => (await post(agent.url, 'typed')).status === 503, 'the tool unavailable', agent);
      // Said at its line, as a syntax error is; it was "tools reloaded typed", then a 422 FORGE_TOOL_START at the call.
      expect((await post(agent.url, 'typed')).body.error).toMatchObject({ code: 'FORGE_TOOL_UNAVAILABLE', message: expect.stringMatching(/tools\/typed\.ts:6:\d+ FORGE_IMPORT/) });
      expect(agent.output()).toMatch(/✘ tools\/typed\.ts:6:\d+ FORGE_IMPORT .*no-such-pkg/);
      saves.inPlace(join(project, 'tools/typed.ts'), typed('./pad.ts'));
      await until(async () => (await post(agent.url, 'typed')).body.value?.word === ' hi ', 'the tool back', agent);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('makes the tools importing a helper module that stops compiling (Python, TypeScript) unavailable with its located error, until it compiles again', async () => {
    const helper = (colon: string) => `def shout(word)${colon}\n    return word.upper()\n`;
    const greet = `"""\nTool: greet\nDescription: Shouts a greeting.\nTags: read\n"""\nfrom helpers import shout\n\n\ndef execute(args):\n    return {"greeting": shout("hi")}\n`;
    const utils = (body: string) => `export function shout(word: string): string {\n  ${body}\n}\n`;
    const typed = `/**\n * Tool: typed\n * Description: Shouts a word.\n * Tags: read\n */\nimport { shout } from './text-utils.ts';\n\nexport function execute() {\n  return { word: shout('hi') };\n}\n`;
    const project = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/helpers.py': helper(':'),
      'tools/greet.py': greet,
      'tools/plain.py': versioned('plain', 1),
      'tools/text-utils.ts': utils('return word.toUpperCase();'),
      'tools/typed.ts': typed,
    });
    const agent = await devServer(project);
    try {
      expect((await post(agent.url, 'greet')).body.value).toEqual({ greeting: 'HI' });
      expect((await post(agent.url, 'typed')).body.value).toEqual({ word: 'HI' });

      saves.renameOver(join(project, 'tools/helpers.py'), helper(''));
      // Shown at the terminal where it is, with the line, as a broken tool file is.
      await agent.waitFor(/✘ tools\/helpers\.py:\d+:\d+ FORGE_PY_SYNTAX .*\n +\d+ │ def shout\(word\)\n/);
      await agent.waitFor(/cannot load greet\n/);
      expect(await post(agent.url, 'greet')).toMatchObject({ status: 503, body: { error: { code: 'FORGE_TOOL_UNAVAILABLE', message: expect.stringMatching(/tools\/helpers\.py:\d+:\d+ FORGE_PY_SYNTAX/) } } });
      // The tools that do not import it answer as before.
      expect((await post(agent.url, 'plain')).body.value).toEqual({ version: 1 });
      expect((await post(agent.url, 'typed')).body.value).toEqual({ word: 'HI' });
      expect(agent.output()).not.toMatch(/reloaded [\w, ]*\bgreet\b/);

      saves.inPlace(join(project, 'tools/helpers.py'), helper(':'));
      await until(async () => (await post(agent.url, 'greet')).body.value?.greeting === 'HI', 'greet made again', agent);

      saves.inPlace(join(project, 'tools/text-utils.ts'), utils('return word.toUpperCase(;'));
      await agent.waitFor(/✘ tools\/text-utils\.ts:2:\d+ FORGE_SYNTAX/);
      await until(async () => (await post(agent.url, 'typed')).status === 503, 'typed unavailable', agent);
      expect((await post(agent.url, 'typed')).body.error.message).toMatch(/tools\/text-utils\.ts:2:\d+ FORGE_SYNTAX/);
      expect((await post(agent.url, 'greet')).body.value).toEqual({ greeting: 'HI' });

      saves.renameOver(join(project, 'tools/text-utils.ts'), utils('return word.toUpperCase() + "!";'));
      await until(async () => (await post(agent.url, 'typed')).body.value?.word === 'HI!', 'typed made again', agent);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('treats a tool file whose docstring breaks as that tool, not as a helper module: the other tools of its language are not reloaded', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/note_search.py': versioned('note_search', 1), 'tools/greet.py': versioned('greet', 1), 'tools/sentiment.py': versioned('sentiment', 1) });
    const agent = await devServer(project);
    try {
      saves.inPlace(join(project, 'tools/note_search.py'), versioned('note_search', 2).replace('Tags: read', 'Tags: read\nInput:\n  query (strng): What to look for.'));
      await agent.waitFor(/tools cannot load note_search\n/);
      expect(agent.output()).not.toMatch(/reloaded/);
      expect((await post(agent.url, 'note_search')).status).toBe(503);
      expect((await post(agent.url, 'greet')).body.value).toEqual({ version: 1 });
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('lists a tool that was already broken at start, answering 503 with its diagnostic', async () => {
    const broken = versioned('broken', 1).replace('Tags: read', 'Tags: read\nInput:\n  x (strng): X.');
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/broken.py': broken, 'tools/fine.py': versioned('fine', 1) });
    const agent = await devServer(project);
    const client = new Client({ name: 'test', version: '1.0.0' });
    try {
      await agent.waitFor('cannot load broken');
      expect(await names(agent.url)).toEqual(['broken', 'fine']);
      const rest = await post(agent.url, 'broken');
      expect(rest.status).toBe(503);
      expect(rest.body.error.message).toContain('strng');
      expect((await post(agent.url, 'fine')).body.value).toEqual({ version: 1 });
    } finally {
      await client.close();
      await agent.stop();
    }
  }, 120_000);
});
