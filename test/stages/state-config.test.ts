/** forge.yaml's `state:`: recorded in agent.json for the runtime; a password in it is refused where it is written. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../helpers/project.ts';

describe('state: in forge.yaml', () => {
  it('is recorded in agent.json', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('state: postgres://forge@db.internal:5432/forge\n') });
    const built = await forge(['build'], project);
    expect(built.code, built.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(project, '.forge-output', 'agent.json'), 'utf8')).state).toBe('postgres://forge@db.internal:5432/forge');
  });

  it('refuses a URL with a password, at its line', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('state: postgres://forge:hunter2@db.internal/forge\n') });
    const built = await forge(['build'], project);
    expect(built.code).toBe(1);
    expect(built.stderr).toMatch(/forge\.yaml:4:\d+/);
    expect(built.stderr).toContain('"state" holds a password');
    expect(built.stderr).toContain('PGPASSWORD');
  });

  it('refuses a path after file:, at its line, saying where the state is kept', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('state: file:/data/state\n') });
    const built = await forge(['build'], project);
    expect(built.code).toBe(1);
    expect(built.stderr).toMatch(/forge\.yaml:4:\d+ FORGE_CONFIG_VALUE/);
    expect(built.stderr).toContain('mount that folder there');
    expect(await forge(['build'], writeProject({ 'forge.yaml': minimalConfig('state: "file:"\n') }))).toMatchObject({ code: 0 });
  });
});
