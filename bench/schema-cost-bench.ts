/**
 * What argument validation costs the server's one thread for a schema someone
 * other than the project wrote (a forged tool's, an MCP server's), and what
 * the count before it (runtime/tools/check-cost.ts) costs and refuses. For
 * each case: ajv alone on the schema as the project's own (what an external
 * schema cost before the count), the count's units and time, ajv's time per
 * unit (what CHECK_COST_BUDGET is set from: the budget times the costliest
 * kind should stay about a second), and the whole check as the agent makes it
 * on the schema from outside.
 *
 * Measured 2026-11-28 on the 2-core machine (helpers' tests beside it):
 * anyOf 1,000 objects x 40,000 items took ajv 31-45 s, and is now refused
 * after 48 ms of counting; the costliest units ran 280-570 ns of ajv (object
 * branches that fail, an enum, `format` on a long string), so the budget of
 * 3,000,000 is about a second; a schema without alternatives counts one unit
 * per part, and the count costs a fraction of ajv's check.
 * Run with `npx tsx bench/schema-cost-bench.ts` (ajv alone on the largest case takes half a minute).
 */
import { checkCost } from '../runtime/tools/check-cost.ts';
import type { JSONSchema } from '../runtime/tools/model.ts';
import { checkArguments, compileSchema, markExternal } from '../runtime/tools/validation.ts';

function measure(label: string, schema: object, args: unknown): void {
  const own = structuredClone(schema) as JSONSchema;
  const external = markExternal(structuredClone(schema) as JSONSchema);
  compileSchema(own);
  let start = performance.now();
  compileSchema(own)(structuredClone(args));
  const ajvMs = performance.now() - start;
  checkCost(external, args, Infinity);
  start = performance.now();
  const units = checkCost(external, args, Infinity)!;
  const countMs = performance.now() - start;
  compileSchema(external);
  start = performance.now();
  const checked = checkArguments(external, args);
  const agentMs = performance.now() - start;
  const body = JSON.stringify(args).length;
  console.log(
    `${label} (${body} B): ajv alone ${ajvMs.toFixed(0)} ms; count ${units} units in ${countMs.toFixed(1)} ms, ${((ajvMs * 1e6) / units).toFixed(0)} ns of ajv per unit; ` +
      `as the agent checks it ${agentMs.toFixed(0)} ms, ${checked.ok ? 'valid' : checked.errors[0]!.startsWith('the value would take too long') ? 'refused as too costly' : 'invalid'}`,
  );
}

const branches = (n: number) => ({ anyOf: Array.from({ length: n }, (_, i) => ({ type: 'object', properties: { k: { const: `v${i}` } }, required: ['k'] })) });
const rows = (n: number, k: string) => Array.from({ length: n }, () => ({ k }));
for (const [fan, items] of [[1000, 40_000], [1000, 2_000], [100, 20_000], [10, 100_000], [3, 200_000]] as const) {
  measure(`anyOf ${fan} objects x ${items} items`, { type: 'object', properties: { xs: { type: 'array', items: branches(fan) } } }, { xs: rows(items, `v${fan - 1}`) });
}
measure('enum 1000 x 100000 items', { type: 'object', properties: { xs: { type: 'array', items: { enum: Array.from({ length: 1000 }, (_, i) => `v${i}`) } } } }, { xs: Array(100_000).fill('v999') });
measure('numbers x 300000 (no alternatives)', { type: 'object', properties: { xs: { type: 'array', items: { type: 'number' } } } }, { xs: Array.from({ length: 300_000 }, (_, i) => i) });
measure('objects of 5 x 100000 (no alternatives)', { type: 'object', properties: { xs: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' }, c: { type: 'boolean' }, d: { type: 'string', format: 'email' }, e: { type: 'integer' } } } } } }, { xs: Array.from({ length: 100_000 }, (_, i) => ({ a: 'x', b: i, c: true, d: 'a@b.co', e: 1 })) });
measure('format email x 100 alternatives, 1 MB string', { type: 'object', properties: { s: { anyOf: Array.from({ length: 100 }, () => ({ type: 'string', format: 'email' })) } } }, { s: 'a'.repeat(1_000_000) });
