import { describe, expect, it } from 'vitest';
import { checkArguments, compileSchema, schemaProblem } from '../../../runtime/tools/validation.ts';

describe('argument validation', () => {
  it('fills in defaults on a copy and names the argument that is wrong', () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' }, label: { type: 'string', default: 'x' } }, required: ['n'], additionalProperties: false };
    const args = { n: 1 };
    expect(checkArguments(schema, args)).toEqual({ ok: true, args: { n: 1, label: 'x' }, errors: [] });
    expect(args).toEqual({ n: 1 });
    expect(checkArguments(schema, { n: 'one', extra: true }).errors).toEqual(['unknown argument "extra"', 'argument "n" must be integer']);
  });

  it('names the declared argument an unknown one is closest to, nested ones too, and none when nothing is close', () => {
    const schema = {
      type: 'object',
      properties: { language: { type: 'string' }, options: { type: 'object', properties: { max_length: { type: 'integer' } }, additionalProperties: false } },
      additionalProperties: false,
    };
    expect(checkArguments(schema, { langauge: 'fr' }).errors).toEqual(['unknown argument "langauge" (did you mean "language"?)']);
    expect(checkArguments(schema, { options: { maxlength: 3 } }).errors).toEqual(['unknown argument "options.maxlength" (did you mean "max_length"?)']);
    expect(checkArguments(schema, { colour: 'red' }).errors).toEqual(['unknown argument "colour"']);
    // Not one already passed: renaming to it would pass that argument twice.
    expect(checkArguments(schema, { language: 'en', langauge: 'fr' }).errors).toEqual(['unknown argument "langauge"']);
  });

  it('says which value an enum argument got, and the member it is closest to', () => {
    const schema = { type: 'object', properties: { kind: { type: 'string', enum: ['food', 'drink'] }, n: { type: 'integer', enum: [1, 2] }, items: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } } } };
    expect(checkArguments(schema, { kind: 'fod' }).errors).toEqual(['argument "kind" must be one of "food", "drink" (got "fod"; did you mean "food"?)']);
    expect(checkArguments(schema, { kind: 'snack' }).errors).toEqual(['argument "kind" must be one of "food", "drink" (got "snack")']);
    expect(checkArguments(schema, { n: 3 }).errors).toEqual(['argument "n" must be one of 1, 2 (got 3)']);
    expect(checkArguments(schema, { items: ['a', 'c'] }).errors).toEqual(['argument "items.1" must be one of "a", "b" (got "c")']);
  });

  it('compiles a tool schema without checking it against the meta-schema again: that check is where schemas enter', () => {
    // Not valid JSON Schema (a description must be a string), and harmless to validate with.
    const schema = { type: 'object', description: 5, properties: { n: { type: 'integer' } } };
    expect(schemaProblem(schema)).toMatch(/description must be string/);
    expect(compileSchema(schema)({ n: 1 })).toBe(true);
    expect(compileSchema(schema)({ n: 'one' })).toBe(false);
  });
});
