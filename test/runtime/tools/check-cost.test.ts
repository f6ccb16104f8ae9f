/**
 * What checking a value against a schema from outside would cost, counted
 * before ajv runs (runtime/tools/check-cost.ts). The attacker writes the
 * schema (an MCP server, a forge request) and the value, and hides the
 * work wherever ajv reaches: behind each applicator, each way a `$ref`
 * names its target, in long strings, in member names. Each case makes a
 * value cost past the budget only through the one way it is about, and
 * checks that an ordinary value through the same way is still counted.
 */
import { describe, expect, it } from 'vitest';
import { CHECK_COST_BUDGET, checkCost } from '../../../runtime/tools/check-cost.ts';
import type { JSONSchema } from '../../../runtime/tools/model.ts';
import { checkArguments, compileResultSchema, markExternal } from '../../../runtime/tools/validation.ts';

/** 1,000 alternatives for one value, each an object that fails unless its `k` is the last one's. */
const FAN = { anyOf: Array.from({ length: 1000 }, (_, i) => ({ type: 'object', properties: { k: { const: `v${i}` } }, required: ['k'] })) };
/** Enough items that each tried against the fan passes the budget: the bench's 909 kB body held the thread 31 s. */
const MANY = Array.from({ length: 40_000 }, () => ({ k: 'v999' }));
const FEW = MANY.slice(0, 5);

function expectRefused(schema: object, value: unknown): void {
  expect(checkCost(schema as JSONSchema, value)).toBeUndefined();
}

function expectCounted(schema: object, value: unknown): void {
  expect(checkCost(schema as JSONSchema, value)).toBeGreaterThan(0);
}

describe('checkCost', () => {
  it('counts about one unit per part of the value for a schema without alternatives: a megabyte of arguments stays well within the budget', () => {
    const schema = { type: 'object', properties: { xs: { type: 'array', items: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'string' } } } } } };
    const xs = Array.from({ length: 60_000 }, (_, i) => ({ a: i, b: 'x' }));
    expect(JSON.stringify({ xs }).length).toBeGreaterThan(1_000_000);
    const units = checkCost(schema as JSONSchema, { xs })!;
    expect(units).toBeGreaterThan(180_000); // each object, a and b
    expect(units).toBeLessThan(CHECK_COST_BUDGET / 5);
  });

  it.each<[string, (fan: object) => object, (items: unknown[]) => unknown]>([
    ['anyOf under items', (fan) => ({ type: 'array', items: fan }), (items) => items],
    ['oneOf', (fan) => ({ type: 'array', items: { oneOf: (fan as typeof FAN).anyOf } }), (items) => items],
    ['allOf', (fan) => ({ type: 'array', items: { allOf: [fan] } }), (items) => items],
    ['not', (fan) => ({ type: 'array', items: { not: { not: fan } } }), (items) => items],
    ['if', (fan) => ({ type: 'array', items: { if: fan } }), (items) => items],
    ['then', (fan) => ({ type: 'array', items: { if: {}, then: fan } }), (items) => items],
    ['else', (fan) => ({ type: 'array', items: { if: false, else: fan } }), (items) => items],
    ['a property', (fan) => ({ type: 'object', properties: { xs: { type: 'array', items: fan } } }), (items) => ({ xs: items })],
    ['additionalProperties', (fan) => ({ type: 'object', properties: { named: {} }, additionalProperties: fan }), (items) => Object.fromEntries(items.map((item, i) => [`m${i}`, item]))],
    ['patternProperties', (fan) => ({ type: 'object', patternProperties: { '^m': fan } }), (items) => Object.fromEntries(items.map((item, i) => [`m${i}`, item]))],
    ['unevaluatedProperties', (fan) => ({ type: 'object', unevaluatedProperties: fan }), (items) => Object.fromEntries(items.map((item, i) => [`m${i}`, item]))],
    ['propertyNames', (fan) => ({ type: 'object', propertyNames: { anyOf: (fan as typeof FAN).anyOf.map(() => ({ type: 'string', maxLength: 1 })) } }), (items) => Object.fromEntries(items.map((_, i) => [`m${i}`, 0]))],
    ['dependentSchemas', (fan) => ({ type: 'array', items: { dependentSchemas: { k: fan } } }), (items) => items],
    ['dependencies (a schema)', (fan) => ({ type: 'array', items: { dependencies: { k: fan } } }), (items) => items],
    ['prefixItems and the items after them', (fan) => ({ type: 'array', prefixItems: [{}], items: fan }), (items) => [0, ...items]],
    ['additionalItems after draft 7 items', (fan) => ({ type: 'array', items: [{}], additionalItems: fan }), (items) => [0, ...items]],
    ['contains', (fan) => ({ type: 'array', contains: fan }), (items) => items],
    ['unevaluatedItems', (fan) => ({ type: 'array', unevaluatedItems: fan }), (items) => items],
  ])('follows %s: many parts through it pass the budget, a few are counted', (_how, place, shape) => {
    expectRefused(place(FAN), shape(MANY));
    expectCounted(place(FAN), shape(FEW));
  });

  it.each<[string, object]>([
    ['a pointer into $defs', { $defs: { fan: FAN }, type: 'array', items: { $ref: '#/$defs/fan' } }],
    ['a pointer into definitions', { definitions: { fan: FAN }, type: 'array', items: { $ref: '#/definitions/fan' } }],
    ['a pointer to a part no keyword holds', { 'x-stash': { fan: FAN }, type: 'array', items: { $ref: '#/x-stash/fan' } }],
    ['a pointer escaped (~1, ~0, %20)', { $defs: { 'a/b~c d': FAN }, type: 'array', items: { $ref: '#/$defs/a~1b~0c%20d' } }],
    ['a pointer into a map member named like data', { properties: { enum: FAN }, type: 'array', items: { $ref: '#/properties/enum' } }],
    ['an $anchor', { $defs: { fan: { $anchor: 'fan', ...FAN } }, type: 'array', items: { $ref: '#fan' } }],
    ['a draft 7 "#name" $id', { definitions: { fan: { $id: '#fan', ...FAN } }, type: 'array', items: { $ref: '#fan' } }],
    ['another resource ($id) by its address', { $id: 'https://example.com/root.json', $defs: { fan: { $id: 'fan.json', ...FAN } }, type: 'array', items: { $ref: 'fan.json' } }],
    ['a pointer inside another resource', { $id: 'https://example.com/root.json', $defs: { other: { $id: 'other.json', $defs: { fan: FAN } } }, type: 'array', items: { $ref: 'other.json#/$defs/fan' } }],
    ['a $dynamicRef', { $defs: { fan: { $dynamicAnchor: 'fan', ...FAN } }, type: 'array', items: { $dynamicRef: '#fan' } }],
  ])('follows $ref by %s', (_how, schema) => {
    expectRefused(schema, MANY);
    expectCounted(schema, FEW);
  });

  it('counts a $ref that doubles the work at every level of the value: 30 levels are refused, 3 are counted', () => {
    // Each level is checked against both branches, and each branch again against both: 2^30 checks.
    const doubling = { $defs: { n: { type: 'array', items: { anyOf: [{ allOf: [{ $ref: '#/$defs/n' }, { not: {} }] }, { $ref: '#/$defs/n' }] } } }, $ref: '#/$defs/n' };
    const nested = (depth: number): unknown => (depth === 0 ? [] : [nested(depth - 1)]);
    expectRefused(doubling, nested(30));
    expectCounted(doubling, nested(3));
  });

  it('refuses a schema that applies itself in place for ever, at its first value', () => {
    expectRefused({ $ref: '#' }, 1);
    expectRefused({ allOf: [{ $ref: '#' }, { $ref: '#' }] }, {});
  });

  it('multiplies in-place schemas that each apply the same two again, 40 levels deep, rather than walking each of 2^40 paths', () => {
    let schema: object = { type: 'number' };
    for (let level = 0; level < 40; level++) schema = { allOf: [schema, schema] };
    expectRefused(schema, 1);
    schema = { type: 'number' };
    for (let level = 0; level < 10; level++) schema = { allOf: [schema, schema] };
    expect(checkCost(schema as JSONSchema, 1)).toBe(2 ** 11 - 1);
  });

  it('counts each string keyword by the length of the string it reads', () => {
    const schema = (keyword: object) => ({ type: 'object', properties: { s: { anyOf: Array.from({ length: 100 }, () => ({ type: 'string', ...keyword })) } } });
    for (const keyword of [{ pattern: '^a*b$' }, { format: 'email' }, { maxLength: 5 }, { enum: ['x'] }, { const: 'x' }]) {
      expectRefused(schema(keyword), { s: 'a'.repeat(2_000_000) });
      expectCounted(schema(keyword), { s: 'a'.repeat(1_000) });
    }
  });

  it('counts an enum by its members and uniqueItems by the whole array', () => {
    const members = Array.from({ length: 5000 }, (_, i) => `v${i}`);
    expectRefused({ type: 'array', items: { enum: members } }, Array.from({ length: 20_000 }, () => 'v4999'));
    expectCounted({ type: 'array', items: { enum: members } }, ['v1', 'v2']);
    // Object members are compared deeply: 100 members of 100 fields each, against 4,000 objects.
    const objects = Array.from({ length: 100 }, (_, i) => Object.fromEntries(Array.from({ length: 100 }, (_, j) => [`f${j}`, i])));
    expectRefused({ type: 'array', items: { enum: objects } }, Array.from({ length: 4000 }, () => objects[99]));
    expectCounted({ type: 'array', items: { enum: objects } }, [objects[0]]);
    const uniqueUnderFan = { anyOf: Array.from({ length: 1000 }, () => ({ type: 'array', uniqueItems: true })) };
    expectRefused(uniqueUnderFan, Array.from({ length: 10_000 }, (_, i) => [i]));
    expectCounted(uniqueUnderFan, [[1], [2]]);
  });

  it('counts member names and values that are not objects where they are met', () => {
    expect(checkCost({ type: 'string' }, 'x')).toBe(1);
    expect(checkCost({ anyOf: [{ type: 'number' }, { type: 'string' }] }, 3)).toBe(3);
    expectRefused({ anyOf: Array.from({ length: 100 }, () => ({ type: 'string', pattern: 'x' })) }, 'a'.repeat(2_000_000));
  });
});

describe('the validator of a schema from outside', () => {
  // One schema object: ajv compiles 1,000 branches once (half a second), as a server does per tool.
  const schema = markExternal({ type: 'object', properties: { xs: { type: 'array', items: FAN } } } as JSONSchema);
  const external = () => schema;

  it('refuses arguments too costly to check, saying why and what to do, without checking them', () => {
    const checked = checkArguments(external(), { xs: MANY });
    expect(checked.ok).toBe(false);
    expect(checked.errors).toEqual([expect.stringMatching(/^the value would take too long to check against this schema: .*anyOf.*; send fewer items, or use a schema with fewer alternatives$/)]);
  });

  it('checks arguments within the budget as before', () => {
    expect(checkArguments(external(), { xs: FEW })).toMatchObject({ ok: true, errors: [] });
    expect(checkArguments(external(), { xs: [{ k: 'nope' }] }).errors.join('; ')).toContain('argument "xs.0" must match a schema in anyOf');
  });

  it('refuses a result too costly to check (an MCP server\'s against its own outputSchema)', () => {
    const validate = compileResultSchema(external());
    expect(validate({ xs: MANY })).toBe(false);
    expect(validate.errors?.[0]?.message).toContain('would take too long to check');
    expect(validate({ xs: FEW })).toBe(true);
  });
});
