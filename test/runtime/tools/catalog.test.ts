import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CATALOG, GROUPS } from '../../../runtime/tools/catalog.ts';
import { CATEGORIES, SECURITY_TAGS } from '../../../runtime/tools/model.ts';
import { checkToolName } from '../../../runtime/tools/names.ts';
import { DEFAULT_TIMEOUT_MS } from '../../../runtime/tools/registry.ts';
import { createAjv } from '../../../runtime/tools/validation.ts';
import { repoRoot } from '../../helpers/project.ts';

// The build trusts the schemas of the tools Forge ships (stages/check-schemas.ts);
// this is where they are checked.
describe.each(CATALOG.map((entry) => [entry.name, entry] as const))('catalog entry %s', (name, entry) => {
  it('loads a module whose spec has the same name, a valid category and a valid tool name', async () => {
    const { spec } = (await entry.load()).default;
    expect(spec.name).toBe(name);
    expect(CATEGORIES).toContain(spec.category);
    expect(spec.category).not.toBe('custom');
    expect(checkToolName(spec.name, spec.category)).toBeUndefined();
    expect(spec.description.length).toBeGreaterThan(20);
  });

  it('declares a security tag (read, write or run), and lives in the folder of its category', async () => {
    const { spec } = (await entry.load()).default;
    expect(spec.tags.filter((t) => (SECURITY_TAGS as readonly string[]).includes(t))).toHaveLength(1);
    expect(entry.module.startsWith('dev/')).toBe(spec.category === 'dev');
  });

  it('gives the registry a time limit above the longest timeout its inputs or config allow (seconds)', async () => {
    const { spec, configSchema, specFor } = (await entry.load()).default;
    const maxOf = (schema: Record<string, unknown> | undefined) => ((schema?.properties as Record<string, { maximum?: number }> | undefined)?.timeout?.maximum ?? 0) * 1000;
    // A tool whose limit follows its config (cli_execute) is checked with the config at its largest.
    const largest = maxOf(configSchema) ? { timeout: maxOf(configSchema) / 1000 } : {};
    const limit = specFor?.(largest).timeoutMs ?? spec.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    expect(Math.max(maxOf(spec.inputSchema), maxOf(configSchema))).toBeLessThan(limit);
  });

  it('points `module` at the same file `load` imports (the build bundles by path)', async () => {
    const byPath = await import(pathToFileURL(join(repoRoot, 'runtime', 'tools', entry.module)).href);
    expect(byPath.default).toBe((await entry.load()).default);
  });

  it('has schemas that are valid and compile', async () => {
    const definition = (await entry.load()).default;
    const ajv = createAjv();
    expect(ajv.validateSchema(definition.spec.inputSchema), ajv.errorsText()).toBe(true);
    expect(definition.spec.inputSchema.type).toBe('object');
    expect(() => ajv.compile(definition.spec.inputSchema)).not.toThrow();
    if (definition.spec.outputSchema) expect(() => ajv.compile(definition.spec.outputSchema!)).not.toThrow();
    if (definition.configSchema) expect(() => ajv.compile(definition.configSchema!)).not.toThrow();
  });
});

describe('GROUPS', () => {
  it.each(Object.entries(GROUPS))('group %s names only catalog tools, none twice', (_group, members) => {
    const names = CATALOG.map((entry) => entry.name);
    for (const member of members) expect(names).toContain(member);
    expect(new Set(members).size).toBe(members.length);
  });

  it('has no group named like a tool', () => {
    for (const group of Object.keys(GROUPS)) expect(CATALOG.map((e) => e.name)).not.toContain(group);
  });

  it('puts every code-agent tool in code_agent, split into read and write groups', () => {
    expect([...GROUPS.code_agent].sort()).toEqual([...new Set([...GROUPS.code_agent_read, ...GROUPS.code_agent_write])].sort());
    expect(GROUPS.code_agent_read).toEqual(expect.arrayContaining(['file_read', 'glob_search', 'grep_search', 'directory_tree']));
    expect(GROUPS.code_agent_write).toEqual(expect.arrayContaining(['file_write', 'file_edit', 'file_patch', 'atomic_edit']));
  });

  it('holds the sub-tools of every composed tool it holds', async () => {
    for (const members of Object.values(GROUPS)) {
      for (const member of members) {
        const { spec } = (await CATALOG.find((e) => e.name === member)!.load()).default;
        for (const sub of spec.composedOf ?? []) expect(members, `${member} calls ${sub}`).toContain(sub);
      }
    }
  });
});
