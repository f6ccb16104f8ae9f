import { describe, expect, it, vi } from 'vitest';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { checkArguments, compileSchema, markExternal, schemaProblem } from '../../../runtime/tools/validation.ts';

describe('argument validation', () => {
  it('fills in defaults on a copy and names the argument that is wrong', () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' }, label: { type: 'string', default: 'x' } }, required: ['n'], additionalProperties: false };
    const args = { n: 1 };
    expect(checkArguments(schema, args)).toEqual({ ok: true, args: { n: 1, label: 'x' }, errors: [] });
    expect(args).toEqual({ n: 1 });
    expect(checkArguments(schema, { n: 'one', extra: true }).errors).toEqual(['unknown argument "extra"', 'argument "n" must be an integer (got "one")']);
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

describe('objects compared by value (uniqueItems, enum, const)', () => {
  // Regression: checked without prototypes, two objects of an argument were compared by ajv's deep equality,
  // which calls valueOf (uniqueItems: a TypeError, every call of the tool failed) and compares constructors (enum).
  it('checks an array of objects that must be unique, and an enum of objects', () => {
    const schema = {
      type: 'object',
      properties: {
        items: { type: 'array', uniqueItems: true, items: { type: 'object' } },
        mode: { enum: [{ kind: 'fast' }, { kind: 'slow' }] },
      },
    };
    expect(checkArguments(schema, { items: [{ a: 1 }, { a: 2 }], mode: { kind: 'fast' } })).toEqual({ ok: true, args: { items: [{ a: 1 }, { a: 2 }], mode: { kind: 'fast' } }, errors: [] });
    expect(checkArguments(schema, { items: [{ a: 1 }, { a: 1 }] }).ok).toBe(false);
  });
});

describe('format: url', () => {
  const schema = { type: 'object', properties: { u: { type: 'string', format: 'url' } } };
  const valid = (u: string) => checkArguments(schema, { u }).ok;

  it('is checked in time linear in the value: the format\'s own regexp (a lookahead, the u flag) backtracks over a userinfo of colons or @s for minutes', () => {
    // An MCP server's outputSchema may say format: url of a result the same server sends (or a caller an argument's).
    for (const u of [`http://${':'.repeat(200_000)}`, `http://${'a@'.repeat(100_000)}`, `http://${'a:'.repeat(100_000)}@`, `http://x${'@a'.repeat(100_000)}/`]) {
      const started = performance.now();
      expect(valid(u)).toBe(false);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  });

  it('accepts and refuses what the format\'s own regexp does', () => {
    const own = fullFormats.url as RegExp;
    const samples = [
      'http://example.com', 'https://example.com:8080/a/b?c=d#e', 'ftp://user:pass@ftp.example.org/file', 'http://a/b@example.com', 'http://u@p@example.com/x@y',
      'http://10.0.0.1/', 'http://8.8.8.8', 'http://192.168.1.1', 'http://localhost', 'http://exa mple.com', 'http://example.com/ space', 'http://@example.com',
      'HTTP://EXAMPLE.COM', 'http://ex-ample.co.uk', 'http://-bad.com', 'http://example.com:1', 'http://example.com:123456', 'mailto:a@b.com', 'http://münchen.de/',
      'http://example.com@', 'http://a@b@', 'http://user@10.1.2.3', 'http://user@8.8.8.8:80/x', 'http://a.b', 'http://a.bc', 'http://example.com//x@y@z', '',
    ];
    for (const u of samples) expect(valid(u), u).toBe(own.test(u));
  });
});

describe("ajv's own logger", () => {
  it('writes nothing to the console: a schema someone else wrote chooses what it would say (a format name, a whole generated function)', () => {
    const written: unknown[] = [];
    const spies = (['log', 'warn', 'error'] as const).map((level) => vi.spyOn(console, level).mockImplementation((...args) => void written.push(args)));
    try {
      const format = 'nope\u001b[2J{"level":"error","msg":"forged"}';
      compileSchema(markExternal({ type: 'string', format }));
      compileSchema({ type: 'string', format });
      expect(schemaProblem({ type: 'object', properties: { x: { type: 'string', format } } })).toBeUndefined();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(written).toEqual([]);
  });
});
