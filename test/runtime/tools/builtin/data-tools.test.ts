import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers/project.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

let t: ToolHarness;
beforeAll(async () => {
  t = await tools(['json_parse', 'csv_parse', 'datetime_now', 'uuid_generate'], { workDir: tempDir() });
});

describe('json_parse', () => {
  const doc = JSON.stringify({ items: [{ name: 'a', price: 5 }, { name: 'b', price: 15 }, { name: 'c', price: 25 }], owner: { name: 'ann' } });

  it('parses and pretty-prints', async () => {
    expect(await t.value('json_parse', { text: '{"a":[1,2]}' })).toEqual({ value: { a: [1, 2] }, pretty: '{\n  "a": [\n    1,\n    2\n  ]\n}' });
    expect(await t.value('json_parse', { text: '{"a":1}', indent: 0 })).toMatchObject({ pretty: '{"a":1}' });
  });

  it.each([
    ['items[?price > `10`].name', ['b', 'c']],
    ['length(items)', 3],
    ['max_by(items, &price).name', 'c'],
    ['owner.name', 'ann'],
    ['missing', null],
  ])('selects with the JMESPath query %s', async (query, expected) => {
    expect((await t.value('json_parse', { text: doc, query })).value).toEqual(expected);
  });

  it.each([
    ['{"a": 1,\n  "b": }', 'line 2, column 8', 'a value was expected, not "}"'],
    ['{"a": 1,}', 'line 1, column 9', 'trailing commas are not allowed'],
    ['[1, 2,]', 'line 1, column 7', 'trailing commas are not allowed'],
    ["{'a': 1}", 'line 1, column 2', 'a property name in double quotes'],
    ["['a']", 'line 1, column 2', 'strings need double quotes'],
    ['[1, 2', 'line 1, column 6', 'a comma or a closing ]'],
    ['{"a" 1}', 'line 1, column 6', 'a colon was expected'],
    ['', 'line 1, column 1', 'the text ends'],
    ['{"a": 1} x', 'line 1, column 10', 'nothing may follow'],
    ['// note\n{}', 'line 1, column 1', 'comments are not allowed'],
    ['{"a": 01}', 'line 1, column 8', 'malformed number'],
    ['"tab\tin string"', 'line 1, column 5', 'control character'],
    ['"bad \\x escape"', 'line 1, column 6', 'invalid escape'],
    ['"open', 'line 1, column 6', 'unterminated string'],
    ['[tru]', 'line 1, column 2', 'a value was expected'],
  ])('reports invalid JSON %j at its line and column', async (text, where, problem) => {
    const result = await t.call('json_parse', { text });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_JSON_SYNTAX' } });
    if (!result.ok) {
      expect(result.error.message).toContain(where);
      expect(result.error.message).toContain(problem);
    }
  });

  it('reports an invalid query', async () => {
    expect(await t.call('json_parse', { text: '{}', query: 'items[' })).toMatchObject({ ok: false, error: { code: 'FORGE_JSON_QUERY', message: expect.stringContaining('items[') } });
  });
});

describe('csv_parse', () => {
  it('finds a repeated column in a header of 140,000 (1 MB) at once, and reads one without repeats', async () => {
    const names = Array.from({ length: 140_000 }, (_, i) => `c${i}`);
    const started = performance.now();
    const unique = await t.value<{ columns: string[]; count: number }>('csv_parse', { text: `${names.join(',')}\n` });
    expect(unique.columns).toHaveLength(140_000);
    expect(await t.call('csv_parse', { text: `${[...names, 'c7'].join(',')}\n` })).toMatchObject({ ok: false, error: { code: 'FORGE_CSV_HEADER', message: 'the header names column "c7" twice' } });
    // Comparing each name with every other took 15 s here.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('reads a header and quoted fields per RFC 4180 (delimiters, doubled quotes and line breaks inside quotes)', async () => {
    const text = 'name,quote,n\r\n"Smith, J","He said ""hi""",1\r\nDoe,"two\nlines",2\r\n';
    expect(await t.value('csv_parse', { text })).toEqual({
      columns: ['name', 'quote', 'n'],
      records: [
        { name: 'Smith, J', quote: 'He said "hi"', n: '1' },
        { name: 'Doe', quote: 'two\nlines', n: '2' },
      ],
      count: 2,
      truncated: false,
    });
  });

  it('returns rows as lists without a header, with another delimiter', async () => {
    expect(await t.value('csv_parse', { text: 'a;b\n1;2\n', header: false, delimiter: ';' })).toEqual({ records: [['a', 'b'], ['1', '2']], count: 2, truncated: false });
  });

  it('reads TSV, ignores a byte-order mark, and stops at max_records', async () => {
    const value = await t.value('csv_parse', { text: '\uFEFFk\tv\n1\tx\n2\ty\n3\tz\n', delimiter: '\t', max_records: 2 });
    expect(value).toMatchObject({ columns: ['k', 'v'], records: [{ k: '1', v: 'x' }, { k: '2', v: 'y' }], truncated: true });
  });

  it.each([
    ['a,b\n1,2,3\n', {}, 'FORGE_CSV_SYNTAX', /line 2/],
    ['a,b\n"unclosed,2\n', {}, 'FORGE_CSV_SYNTAX', /quote/i],
    ['a,a\n1,2\n', {}, 'FORGE_CSV_HEADER', /"a" twice/],
  ])('refuses %j clearly', async (text, extra, code, message) => {
    const result = await t.call('csv_parse', { text, ...extra });
    expect(result).toMatchObject({ ok: false, error: { code } });
    if (!result.ok) expect(result.error.message).toMatch(message);
  });

  it('accepts ragged rows with relax_column_count', async () => {
    expect((await t.value('csv_parse', { text: 'a,b\n1\n', relax_column_count: true })).records).toEqual([{ a: '1' }]);
  });
});

describe('datetime_now', () => {
  it.each([
    ['rfc3339', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/],
    ['date', /^\d{4}-\d\d-\d\d$/],
    ['time', /^\d\d:\d\d:\d\d$/],
    ['rfc2822', /^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d \+0000$/],
  ])('formats now as %s (UTC by default)', async (format, pattern) => {
    const value = await t.value<{ value: string; timezone: string }>('datetime_now', { format });
    expect(value.value).toMatch(pattern);
    expect(value.timezone).toBe('UTC');
  });

  it('gives unix seconds and milliseconds close to the clock', async () => {
    const seconds = (await t.value<{ value: number }>('datetime_now', { format: 'unix' })).value;
    const ms = (await t.value<{ value: number }>('datetime_now', { format: 'unix_ms' })).value;
    expect(Math.abs(seconds - Date.now() / 1000)).toBeLessThan(5);
    expect(Math.abs(ms - Date.now())).toBeLessThan(5000);
  });

  it('reads an IANA time zone and a custom pattern', async () => {
    const value = await t.value<{ value: string; utc_offset: string; timezone: string; rfc3339: string }>('datetime_now', { timezone: 'Asia/Kolkata', format: 'custom', pattern: "yyyy 'at' HH:mm ZZ" });
    expect(value.value).toMatch(/^\d{4} at \d\d:\d\d \+05:30$/);
    expect(value).toMatchObject({ timezone: 'Asia/Kolkata', utc_offset: '+05:30' });
    expect(value.rfc3339).toMatch(/\+05:30$/);
  });

  it('refuses an unknown time zone with the closest name', async () => {
    expect(await t.call('datetime_now', { timezone: 'Europe/Pari' })).toMatchObject({ ok: false, error: { code: 'FORGE_DATETIME_TIMEZONE', hint: 'did you mean "Europe/Paris"?' } });
    expect(await t.call('datetime_now', { timezone: 'Mars/Olympus' })).toMatchObject({ ok: false, error: { code: 'FORGE_DATETIME_TIMEZONE' } });
  });

  it('refuses a time zone name longer than any, before comparing it with each (900 kB of it held the thread 2 s)', async () => {
    expect(await t.call('datetime_now', { timezone: `Europe/${'x'.repeat(900_000)}` })).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS' } });
  });

  it('refuses format custom without a pattern', async () => {
    expect(await t.call('datetime_now', { format: 'custom' })).toMatchObject({ ok: false, error: { code: 'FORGE_DATETIME_PATTERN' } });
  });
});

describe('uuid_generate', () => {
  it('makes distinct v4 and time-ordered v7 UUIDs', async () => {
    const v4 = await t.value<{ uuids: string[] }>('uuid_generate', { count: 5 });
    expect(new Set(v4.uuids).size).toBe(5);
    for (const id of v4.uuids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const v7 = await t.value<{ uuids: string[] }>('uuid_generate', { version: 7, count: 3 });
    for (const id of v7.uuids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(parseInt(v7.uuids[0].replace(/-/g, '').slice(0, 12), 16)).toBeGreaterThan(Date.now() - 60_000);
  });
});
