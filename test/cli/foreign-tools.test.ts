/**
 * Tools written for CmdForge and cycod, pasted into tools/, validate and run
 * as Forge YAML tools. The examples are written here from those projects'
 * documented grammars (CmdForge: arguments with flag/variable, type: tool and
 * type: code steps, a text input for a called tool, a free category; cycod:
 * run: with arguments and stdin input, step timeouts, cmd:/pwsh:, boolean
 * flags, the -l -u -g -a scope flags).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, tempDir, writeProject } from '../helpers/project.ts';

const HEADLINE = `name: headline
description: Turns a line of text into a headline.
category: Text Tools
arguments:
  - flag: --mark
    variable: mark
    default: "!"
    description: What the headline ends with.
steps:
  - type: code
    code: |
      words = input.strip().split()
      title = " ".join(w.capitalize() for w in words) + mark
    output_var: title
output: "{title}"
`;

const BANNER = `name: banner
description: Puts a headline between rules.
category: Text Tools
steps:
  - type: tool
    tool: headline
    input: "breaking: {input}"
    output_var: line
  - type: code
    code: |
      framed = "== " + line + " =="
    output_var: framed
output: "{framed}"
`;

const COUNT_MATCHES = `name: count-matches
description: Counts the lines of a text that hold a word.
parameters:
  WORD:
    type: string
    description: The word to look for.
    required: true
  IGNORE_CASE:
    type: boolean
    description: Match regardless of case.
    default: false
    flag: -i
run: grep -c
arguments: ["{IGNORE_CASE}", "{WORD}"]
input: |
  Apple pie
  apple juice
  Banana bread
tags: [text, read]
timeout: 5000
`;

const STEPS = `name: shout-then-wait
description: Upper-cases its text, then waits longer than its step allows.
parameters:
  TEXT:
    type: string
    description: Text to shout.
steps:
  - name: loud
    run: tr a-z A-Z
    input: "{TEXT}"
  - name: wait
    bash: sleep 30
    timeout: 300
`;

const WINDOWS_ONLY = `name: list-drive
description: Lists the current folder the Windows way.
cmd: dir /b
tags: [read]
`;

const env = () => ({ FORGE_HOME: tempDir('forge-home-'), FORGE_GLOBAL_TOOLS: tempDir('forge-global-') });

describe('CmdForge tools in tools/', () => {
  it('validate, and run: arguments become parameters, code steps see them as variables, a tool step passes its text input on', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/headline.yaml': HEADLINE, 'tools/banner.yaml': BANNER });
    const scopes = env();
    const validated = await forge(['validate'], project, scopes);
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);

    const headline = await forge(['tool', 'run', 'headline', '--param', 'stdin=hello big world'], project, scopes);
    expect(headline.code, headline.stderr).toBe(0);
    expect(headline.stdout.trim()).toBe('Hello Big World!');
    const marked = await forge(['tool', 'run', 'headline', '--param', 'stdin=quiet day', '--param', 'mark=.'], project, scopes);
    expect(marked.stdout.trim()).toBe('Quiet Day.');

    const banner = await forge(['tool', 'run', 'banner', '--param', 'stdin=markets rally', '--yes'], project, scopes);
    expect(banner.code, banner.stderr).toBe(0);
    expect(banner.stdout.trim()).toBe('== Breaking: Markets Rally! ==');

    // The free category is a tag; Forge's category stays custom.
    const listed = JSON.parse((await forge(['tool', 'list', '--json'], project, scopes)).stdout);
    expect(listed.tools.find((t: { name: string }) => t.name === 'headline')).toMatchObject({ category: 'custom', tags: expect.arrayContaining(['text-tools']) });
  });

  it('escapes the values a code step reads: quotes and braces arrive as themselves', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/headline.yaml': HEADLINE });
    const tricky = `it's "{x}" \\ $(id)`;
    const run = await forge(['tool', 'run', 'headline', '--param', `stdin=${tricky}`, '--param', 'mark='], project, env());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(`It's "{x}" \\ $(id)`);
  });
});

describe('cycod tools in tools/', () => {
  it('run: with arguments and stdin input; a boolean parameter becomes its flag, or nothing', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/count-matches.yaml': COUNT_MATCHES });
    const scopes = env();
    expect((await forge(['validate'], project, scopes)).code).toBe(0);
    const exact = await forge(['tool', 'run', 'count-matches', '--param', 'WORD=apple'], project, scopes);
    expect(exact.code, exact.stderr).toBe(0);
    expect(exact.stdout.trim()).toBe('1');
    const loose = await forge(['tool', 'run', 'count-matches', '--param', 'WORD=apple', '--param', 'IGNORE_CASE=true', '--show-command'], project, scopes);
    expect(loose.stdout.trim()).toBe('2');
    expect(loose.stderr).toContain('grep -c -i apple');
  });

  it('gives a step its own timeout, and a process step its stdin', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/shout-then-wait.yaml': STEPS });
    const run = await forge(['tool', 'run', 'shout-then-wait', '--param', 'TEXT=hey', '--json'], project, env());
    expect(run.code).toBe(1);
    const result = JSON.parse(run.stdout);
    expect(JSON.stringify(result)).toContain('timeout of 300 ms');
  });

  it('registers cmd:/pwsh: tools only on Windows, listing them elsewhere with a note', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/list-drive.yaml': WINDOWS_ONLY, 'tools/count-matches.yaml': COUNT_MATCHES });
    const scopes = env();
    expect((await forge(['validate'], project, scopes)).code).toBe(0);
    const all = await forge(['tool', 'list', '--all'], project, scopes);
    if (process.platform === 'win32') return;
    expect(all.stdout).toMatch(/list-drive .*runs on windows/);
    const run = await forge(['tool', 'run', 'list-drive'], project, scopes);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('FORGE_TOOL_PLATFORM');
  });

  it('takes the scope flags -l -u -g -a, and --scope any lists and gets across every scope', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/count-matches.yaml': COUNT_MATCHES });
    const scopes = env();
    mkdirSync(join(scopes.FORGE_HOME, 'tools'), { recursive: true });
    writeFileSync(join(scopes.FORGE_HOME, 'tools', 'headline.yaml'), HEADLINE);
    writeFileSync(join(scopes.FORGE_GLOBAL_TOOLS, 'list-drive.yaml'), WINDOWS_ONLY);

    const names = async (...flags: string[]) => JSON.parse((await forge(['tool', 'list', '--json', ...flags], project, scopes)).stdout).tools.map((t: { name: string; scope: string }) => `${t.scope}/${t.name}`).sort();
    expect(await names('-a')).toEqual(['global/list-drive', 'local/count-matches', 'user/headline']);
    expect(await names('--scope', 'any')).toEqual(await names('-a'));
    expect(await names('-u')).toEqual(['user/headline']);
    expect(await names('-g')).toEqual(['global/list-drive']);
    expect(await names('-l')).toEqual(['local/count-matches']);

    const got = await forge(['tool', 'get', 'headline', '-a'], project, scopes);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toContain('name: headline');
    expect((await forge(['tool', 'get', 'headline', '-l'], project, scopes)).code).toBe(1);
    const both = await forge(['tool', 'list', '-u', '-g'], project, scopes);
    expect(both.code).toBe(2);

    // add and remove take them too.
    const added = await forge(['tool', 'add', 'hello', '--description', 'Says hello.', '--bash', 'echo hello', '--tag', 'read', '-g'], project, scopes);
    expect(added.code, added.stderr).toBe(0);
    expect(await names('-g')).toEqual(['global/hello', 'global/list-drive']);
    expect((await forge(['tool', 'remove', 'hello', '-g'], project, scopes)).code).toBe(0);
    expect(await names('-g')).toEqual(['global/list-drive']);
  });
});
