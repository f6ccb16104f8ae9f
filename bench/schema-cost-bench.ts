/**
 * What argument validation costs the server's one thread for a schema someone
 * other than the project wrote (a forged tool's, an MCP server's): ajv's
 * compile, then one call's check, for an array under 1 MB (the REST body
 * limit) whose items must match one of 1,000 branches. Measured 2026-11-28 on
 * the 2-core machine: enum 1,000 x 10,000 items 0.2 s; anyOf 1,000 x 10,000
 * items 7.8 s (compile 0.6 s); x 40,000 items (909 kB) 31 s. uniqueItems adds
 * nothing measurable: the time is ajv's branch-by-branch check of each item.
 * Run with `npx tsx bench/schema-cost-bench.ts`.
 */
import { checkArguments, compileSchema, markExternal } from '../runtime/tools/validation.ts';
import type { JSONSchema } from '../runtime/tools/model.ts';

function measure(kind: 'enum' | 'anyOf', branches: number, items: number, uniqueItems: boolean): void {
  const values = Array.from({ length: branches }, (_, i) => `v${i}`);
  const item = kind === 'enum'
    ? { enum: values }
    : { anyOf: values.map((v) => ({ type: 'object', properties: { k: { const: v } }, required: ['k'] })) };
  const schema = markExternal({ type: 'object', properties: { xs: { type: 'array', items: item, ...(uniqueItems ? { uniqueItems } : {}) } } } as JSONSchema);
  const last = values[branches - 1];
  const xs = Array.from({ length: items }, (_, i) => (kind === 'enum' ? last : { k: last, i }));
  let start = performance.now();
  compileSchema(schema);
  const compileMs = performance.now() - start;
  start = performance.now();
  checkArguments(schema, { xs });
  const validateMs = performance.now() - start;
  console.log(`${kind} branches=${branches} items=${items} uniqueItems=${uniqueItems} body=${JSON.stringify({ xs }).length}B compile=${compileMs.toFixed(0)}ms validate=${validateMs.toFixed(0)}ms`);
}

measure('enum', 1000, 10_000, false);
measure('anyOf', 1000, 10_000, false);
measure('anyOf', 1000, 10_000, true);
measure('anyOf', 1000, 40_000, false);
