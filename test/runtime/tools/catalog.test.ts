import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../../runtime/tools/catalog.ts';
import { CATEGORIES } from '../../../runtime/tools/model.ts';
import { checkToolName } from '../../../runtime/tools/names.ts';
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
