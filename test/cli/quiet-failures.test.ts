/** Failures that used to pass silently or say the wrong thing: each says what happened, where, once. */
import { describe, expect, it } from 'vitest';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { forge, forgeBin, minimalConfig, runProcess, tempDir, writeProject } from '../helpers/project.ts';

const noisy = '"""\nTool: noisy\nDescription: Prints while it works.\nTags: read\n\nInput:\n  x (int): A number.\n"""\nimport sys\n\ndef execute(args):\n    print("thinking about", args.get("x"))\n    print("careful now", file=sys.stderr)\n    return "done"\n';
const liar = (extra = '') => `"""\nTool: liar\nDescription: Promises a count.\nTags: read\n\nOutput:\n  count (int): How many.\n"""\n\ndef execute(args):\n    return {"count": "many"${extra}}\n`;
const emptyScopes = () => ({ FORGE_HOME: tempDir('forge-home-'), FORGE_GLOBAL_TOOLS: tempDir('forge-global-') });

describe('a tool\'s own output', () => {
  it('print() and stderr inside execute() reach the dev server log, tagged with the tool', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/noisy.py': noisy });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: project });
    try {
      const res = await fetch(`${agent.url}/tools/noisy`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x": 7}' });
      expect(((await res.json()) as { value: string }).value).toBe('done');
      await agent.waitFor('noisy │ thinking about 7');
      await agent.waitFor('noisy │ careful now');
    } finally {
      await agent.stop();
    }
  });

  it('reaches the log with its controls shown escaped: a C1 CSI or a bidi override in a tool\'s stderr does not reach the operator\'s terminal', async () => {
    const rude = '"""\nTool: rude\nDescription: Prints controls.\nTags: read\n"""\nimport sys\n\ndef execute(args):\n    print("clear \\u009b2J title \\u009d0;owned\\u009c flip \\u202eexe.txt", file=sys.stderr)\n    return "done"\n';
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/rude.py': rude });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: project });
    try {
      await fetch(`${agent.url}/tools/rude`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      await agent.waitFor(/rude │ clear .*txt/);
      expect(agent.output()).toContain('rude │ clear \\x9b2J title \\x9d0;owned\\x9c flip \\u{202e}exe.txt');
      expect(agent.output()).not.toMatch(/[\u0080-\u009f\u202e]/);
    } finally {
      await agent.stop();
    }
  });

  it('shows with --verbose on forge tool run, and stays off stdout (the result)', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/noisy.py': noisy });
    const quiet = await forge(['tool', 'run', 'noisy', '--param', 'x=1'], project);
    expect(quiet.stdout.trim()).toBe('done');
    expect(quiet.stderr).not.toContain('thinking');
    const verbose = await forge(['tool', 'run', 'noisy', '--param', 'x=1', '--verbose'], project);
    expect(verbose.stdout.trim()).toBe('done');
    expect(verbose.stderr).toContain('noisy │ thinking about 1');
    expect(verbose.stderr).toContain('noisy │ careful now');
  });
});

describe('declared outputs', () => {
  it('warns when a result does not match its Output, and fails the call with strict_outputs: true', async () => {
    const lenient = writeProject({ 'forge.yaml': minimalConfig(), 'tools/liar.py': liar() });
    const warned = await forge(['tool', 'run', 'liar'], lenient);
    expect(warned.code).toBe(0);
    expect(JSON.parse(warned.stdout)).toEqual({ count: 'many' });
    expect(warned.stderr).toMatch(/tool "liar" returned output that does not match its declared Output: "count" must be an integer/);

    const strict = writeProject({ 'forge.yaml': minimalConfig('strict_outputs: true\n'), 'tools/liar.py': liar() });
    const failed = await forge(['tool', 'run', 'liar', '--json'], strict);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout).error).toMatchObject({ code: 'FORGE_TOOL_OUTPUT' });

    const honest = writeProject({ 'forge.yaml': minimalConfig('strict_outputs: true\n'), 'tools/liar.py': liar().replace('"many"', '3') });
    const fine = await forge(['tool', 'run', 'liar'], honest);
    expect(fine.code, fine.stderr).toBe(0);
    expect(fine.stderr).not.toContain('does not match');
  });
});

describe('forge chat without an API key', () => {
  it('refuses before sending anything, naming the variable', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('model:\n  provider: openai\n  name: gpt-4o-mini\n') });
    const env = { OPENAI_API_KEY: '' };
    const result = await runProcess(process.execPath, [forgeBin, 'chat'], { cwd: project, input: 'hello\n', env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('OPENAI_API_KEY is not set');
    expect(result.stdout + result.stderr).not.toMatch(/fallback|every model failed/i);
  });

  it('names a custom api_key_env, and says nothing of fallbacks when a lone model fails', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('model:\n  provider: anthropic\n  name: claude\n  api_key_env: MY_KEY\n') });
    const result = await runProcess(process.execPath, [forgeBin, 'chat'], { cwd: project, input: 'hello\n', env: { MY_KEY: '' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('MY_KEY is not set');
    // A model with its own endpoint (a local server) may need no key: it is tried, and its own error shows.
    const local = writeProject({ 'forge.yaml': minimalConfig('model:\n  provider: openai\n  name: local\n  base_url: http://127.0.0.1:9/v1\n') });
    const down = await runProcess(process.execPath, [forgeBin, 'chat'], { cwd: local, input: 'hello\n/exit\n', env: { OPENAI_API_KEY: '' } });
    expect(down.stdout + down.stderr).not.toMatch(/fallback|every model failed|trying the next/i);
  });
});

describe('a builtin with a bad config value', () => {
  it('is reported once with its place in forge.yaml, stays listed, and a call answers with that error, not FORGE_TOOL_UNKNOWN', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - name: cli_execute\n    config:\n      timeout: -5\n') });
    const listed = await forge(['tool', 'list'], project);
    expect(listed.stdout).toContain('cli_execute');
    const run = await forge(['tool', 'run', 'cli_execute', '--param', 'binary=ls'], project);
    expect(run.code).toBe(1);
    expect(run.stderr.match(/config\.timeout of tool "cli_execute" must be > 0/g)).toHaveLength(2); // the diagnostic, and the call's answer quoting it
    expect(run.stderr).toContain('forge.yaml:7:16');
    expect(run.stderr).toContain('FORGE_TOOL_UNAVAILABLE');
    expect(run.stderr).not.toContain('FORGE_TOOL_UNKNOWN');
    expect(run.stderr).not.toContain('has an invalid config');
  });

  it('cli_execute\'s timeout in describe agrees with its description (the configured timeout plus the 10 s grace)', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - name: cli_execute\n    config:\n      timeout: 45\n') });
    const described = await forge(['tool', 'describe', 'cli_execute'], project);
    expect(described.stdout).toMatch(/timeout\s+55 s/);
    expect(described.stdout).toContain('at most 10 s later');
    const plain = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - cli_execute\n') });
    expect((await forge(['tool', 'describe', 'cli_execute'], plain)).stdout).toMatch(/timeout\s+40 s/);
  });
});

describe('forge tool run and missing dependencies', () => {
  it('refuses (exit 1) a tool whose dependency chain is missing, as forge run and forge build do', async () => {
    const project = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/a.yaml': 'description: A.\nsteps:\n  - tool: b\n',
      'tools/b.yaml': 'description: B.\ndependencies: [summarize@^2.0.0]\nbash: echo b\n',
      'tools/other.yaml': 'description: Other.\nbash: echo other\n',
    });
    const env = emptyScopes();
    for (const name of ['a', 'b']) {
      const run = await forge(['tool', 'run', name], project, env);
      expect(run.code, name).toBe(1);
      expect(run.stderr).toContain('FORGE_TOOL_DEPENDENCY');
      expect(run.stderr).toContain(`tool "${name}" cannot run`);
    }
    const other = await forge(['tool', 'run', 'other'], project, env);
    expect(other.code).toBe(0);
    expect(other.stdout.trim()).toBe('other');
    expect((await forge(['build'], project, env)).code).toBe(1);
  });
});

describe('the agent card without a version header', () => {
  it('is the v0.3 card, as the README says; the SDK client (which sends A2A-Version: 1.0) gets v1.0', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/noisy.py': noisy });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--port', '0', '--no-auth'], { cwd: project });
    try {
      const bare = (await (await fetch(`${agent.url}/.well-known/agent-card.json`)).json()) as { protocolVersion?: string };
      expect(bare.protocolVersion).toBe('0.3.0');
      const card = await new DefaultAgentCardResolver().resolve(agent.url);
      expect(card.supportedInterfaces.map((i) => i.protocolVersion)).toContain('1.0');
      const { readFileSync } = await import('node:fs');
      const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
      expect(readme).toContain('v1.0 for clients that send `A2A-Version: 1.0`');
      expect(readme).toContain('v0.3 without the header');
    } finally {
      await agent.stop();
    }
  });
});
