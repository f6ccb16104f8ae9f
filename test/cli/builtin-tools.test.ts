import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../helpers/project.ts';

describe('forge tool with the tools Forge ships', () => {
  it('lists the dev tools among the tools Forge ships', async () => {
    const { code, stdout } = await forge(['tool', 'list', '--all', '--category', 'dev', '--json'], writeProject({ 'forge.yaml': minimalConfig() }));
    expect(code).toBe(0);
    const rows = JSON.parse(stdout).tools as { name: string; enabled: boolean; tags: string[] }[];
    expect(rows.map((r) => r.name)).toEqual(['debug_console', 'local_file_browser', 'local_shell', 'test_runner']);
    expect(rows.every((r) => !r.enabled)).toBe(true);
  });

  it('describes a tool that is not enabled, with what it does when the issue is silent', async () => {
    const { code, stdout } = await forge(['tool', 'describe', 'grep_search'], writeProject({ 'forge.yaml': minimalConfig() }));
    expect(code).toBe(0);
    expect(stdout).toContain('grep_search  (builtin)  not enabled in forge.yaml');
    expect(stdout).toContain('JavaScript search otherwise');
    expect(stdout).toContain('.gitignore');
    expect(stdout).toContain('tags      read');
  });

  it('runs a builtin from sources, with the path guard', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - code_agent\n'), 'docs/a.md': 'hello\n' });
    const ok = await forge(['tool', 'run', 'file_read', '--param', 'path=docs/a.md', '--json'], dir);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, value: { content: 'hello\n' } });
    const refused = await forge(['tool', 'run', 'file_read', '--param', 'path=../../etc/passwd'], dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('FORGE_PATH_OUTSIDE');
    expect(refused.stderr).toContain('outside the working directory');
  });

  it('warns about an allowed binary that is not installed, and refuses to run it', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - name: cli_execute\n    config: { allowed_binaries: [no-such-binary-here] }\n') });
    const { code, stderr } = await forge(['tool', 'run', 'cli_execute', '--param', 'binary=no-such-binary-here'], dir);
    expect(code).toBe(1);
    expect(stderr).toContain('warning: cli_execute: allowed binary "no-such-binary-here" was not found on PATH');
    expect(stderr).toContain('FORGE_CLI_MISSING');
  });

  it('prints a calculation error with its column and a caret', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - math_calculate\n') });
    const { code, stderr } = await forge(['tool', 'run', 'math_calculate', '--param', 'expression=2 * (3 / 0)'], dir);
    expect(code).toBe(1);
    expect(stderr).toContain('division by zero at column 8');
    expect(stderr).toContain('2 * (3 / 0)\n       ^');
  });

  it('lets debug_console see the project\'s tools and recent calls when run from sources', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - debug_console\n  - json_parse\n') });
    const { stdout } = await forge(['tool', 'run', 'debug_console', '--param', 'section=tools', '--json'], dir);
    expect(JSON.parse(stdout).value.tools.map((t: { name: string; category: string }) => `${t.name}:${t.category}`)).toEqual(['debug_console:dev', 'json_parse:builtin']);
    const config = await forge(['tool', 'run', 'debug_console', '--param', 'section=config', '--json'], dir);
    expect(JSON.parse(config.stdout).value.config).toMatchObject({ agent_id: 'test-agent', tools: ['debug_console', 'json_parse'] });
  });
});

describe('forge.yaml for the tools Forge ships', () => {
  it('reports a misspelt config field of a tool with the field it meant', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - name: cli_execute\n    config: { allowed_binary: [git] }\n') });
    const { code, stderr } = await forge(['validate'], dir);
    expect(code).toBe(1);
    expect(stderr).toContain('unknown config field "allowed_binary" for tool "cli_execute"');
    expect(stderr).toContain('did you mean "allowed_binaries"?');
  });

  it('points at the config field that is wrong, not at the tool\'s name', async () => {
    const yaml = minimalConfig('tools:\n  - name: cli_execute\n    config:\n      allowed_binaries: [git, 3]\n      max_bytes: 10\n  - name: json_parse\n    config: { a: 1 }\n');
    const dir = writeProject({ 'forge.yaml': yaml });
    const lineOf = (text: string) => yaml.split('\n').findIndex((l) => l.includes(text)) + 1;
    const { code, stderr } = await forge(['validate'], dir);
    expect(code).toBe(1);
    expect(stderr).toContain(`forge.yaml:${lineOf('max_bytes')}:7 FORGE_CONFIG_TOOL unknown config field "max_bytes" for tool "cli_execute"`);
    expect(stderr).toContain(`forge.yaml:${lineOf('allowed_binaries')}:31 FORGE_CONFIG_TOOL config.allowed_binaries.1 of tool "cli_execute" must be a string`);
    expect(stderr).toContain(`forge.yaml:${lineOf('{ a: 1 }')}:5 FORGE_CONFIG_TOOL tool "json_parse" takes no config`);
  });

  it('enables a group, and refuses config on it', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - code_agent_read\n') });
    const list = await forge(['tool', 'list', '--json'], dir);
    expect(JSON.parse(list.stdout).tools.map((t: { name: string }) => t.name)).toEqual(['directory_tree', 'file_read', 'glob_search', 'grep_search']);
    const withConfig = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - name: code_agent\n    config: { x: 1 }\n') });
    expect((await forge(['validate'], withConfig)).stderr).toContain('"code_agent" is a group of tools and takes no config');
  });

  it('reports a bad schedule at its line, and records good ones in agent.json', async () => {
    const bad = writeProject({ 'forge.yaml': minimalConfig('schedules:\n  - id: report\n    cron: "0 25 * * *"\n    task: Report.\n') });
    const { code, stderr } = await forge(['validate'], bad);
    expect(code).toBe(1);
    expect(stderr).toContain('forge.yaml:6:11 FORGE_SCHEDULE_CRON');
    expect(stderr).toContain('Invalid value for hour');
    const good = writeProject({ 'forge.yaml': minimalConfig('schedules:\n  - id: report\n    cron: "@daily"\n    task: Report.\n    timezone: Asia/Tokyo\n') });
    expect((await forge(['build'], good)).code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(good, '.forge-output', 'agent.json'), 'utf8'));
    expect(manifest.schedules).toEqual([{ id: 'report', cron: '@daily', task: 'Report.', timezone: 'Asia/Tokyo' }]);
  });

  it('has no schedules key in agent.json when forge.yaml has none', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig() });
    expect((await forge(['build'], dir)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, '.forge-output', 'agent.json'), 'utf8'))).not.toHaveProperty('schedules');
  });
});
