/**
 * The composition check on tools as the loader makes them: a YAML step's
 * args against the schema of the tool it calls, whatever that schema uses
 * ($defs and $ref, as Pydantic and FastMCP servers write them).
 */
import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../runtime/tools/model.ts';
import { checkCompositions } from '../../stages/check-compositions.ts';
import type { ProjectTool } from '../../stages/project-tool.ts';
import { StageContext } from '../../stages/stage.ts';
import { readYamlToolText } from '../../stages/yaml-tool-file.ts';

const REF_SCHEMA = {
  type: 'object',
  properties: { item: { $ref: '#/$defs/Item' }, mode: { type: 'string' } },
  required: ['item'],
  $defs: { Item: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
};

async function caller(name: string, text: string): Promise<ProjectTool> {
  const file = await readYamlToolText(text, `tools/${name}.yaml`, name, `tools/${name}.yaml`);
  expect(file.diagnostics).toEqual([]);
  if (!file.spec) throw new Error(`${name} did not read`);
  return { spec: file.spec, origin: `tools/${name}.yaml`, at: file.at, yaml: { definition: file.definition, locate: file.locate } } as unknown as ProjectTool;
}

const callee = (schema: Record<string, unknown>): ProjectTool => ({ spec: { name: 'd__make', description: 'Makes.', category: 'adapter', tags: ['write'], inputSchema: schema } as ToolSpec, origin: 'mcp:d', at: {} }) as unknown as ProjectTool;

describe('a YAML step calling a tool whose schema uses $ref', () => {
  it('is checked against the whole schema: a literal that fits passes, one that does not is reported, nothing throws', async () => {
    const fits = await caller('fits', 'description: Fits.\nsteps:\n  - tool: d__make\n    args: { item: { n: 2 } }\n');
    const wrong = await caller('wrong', 'description: Wrong.\nsteps:\n  - tool: d__make\n    args: { item: { n: two } }\n');
    const ctx = new StageContext('/', false);
    checkCompositions([callee(REF_SCHEMA), fits, wrong], ctx);
    expect(ctx.diagnostics.map((d) => `${d.file}:${d.line} ${d.code} ${d.message}`)).toEqual(['tools/wrong.yaml:4 FORGE_STEP_ARGS step "step1" passes item={"n":"two"} to "d__make": argument "item.n" must be an integer (got "two")']);
  });

  it('leaves a schema the validator cannot compile to the schema check, instead of stopping the build', async () => {
    const uses = await caller('uses', 'description: Uses.\nsteps:\n  - tool: d__make\n    args: { item: 1 }\n');
    const ctx = new StageContext('/', false);
    expect(() => checkCompositions([callee({ type: 'object', properties: { item: { $ref: '#/$defs/Missing' } } }), uses], ctx)).not.toThrow();
    expect(ctx.diagnostics).toEqual([]);
  });
});
