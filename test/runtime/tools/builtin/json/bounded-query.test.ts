/**
 * json_parse's JMESPath query within its budget (runtime/tools/builtin/json/bounded-query.ts): each way a
 * short query can ask for more than the agent's thread has is stopped before it allocates, and ordinary
 * selections, large ones included, run as the library runs them.
 */
import { search } from '@jmespath-community/jmespath';
import { describe, expect, it } from 'vitest';
import { boundedSearch, QueryBudgetExceeded } from '../../../../../runtime/tools/builtin/json/bounded-query.ts';

const TENFOLD = '[@,@,@,@,@,@,@,@,@,@]';
const numbers = (n: number) => Array.from({ length: n }, (_, i) => i);
const bounded = (value: unknown, query: string) => boundedSearch(value, query, JSON.stringify(value).length);
const stopped = (value: unknown, query: string, why: RegExp) => {
  const started = performance.now();
  expect(() => bounded(value, query)).toThrow(QueryBudgetExceeded);
  expect(() => bounded(value, query)).toThrow(why);
  // Stopped by the count, not by the machine: well before the gigabytes or the seconds it asked for.
  expect(performance.now() - started).toBeLessThan(10_000);
};

describe('a query that multiplies what it holds', () => {
  it('stops a tenfold list flattened again and again (10⁹ items from the text `1`)', () => {
    stopped(1, `${TENFOLD}${`[].${TENFOLD}`.repeat(8)} | length(@)`, /more than [\d,]+ (steps|items)/);
  });

  it('stops a flatten of many references to one large list before it is made', () => {
    stopped(numbers(20_000), '[*].[$,$,$,$,$,$,$,$,$,$][][][]', /more than 2,000,000 items/);
  });

  it('stops the same through a let variable, which the library evaluates with interpreters of its own', () => {
    stopped(numbers(100_000), `let $x = @ in [$x,$x,$x,$x,$x,$x,$x,$x,$x,$x][].[$x,$x,$x,$x,$x,$x,$x,$x,$x,$x][] | length(@)`, /more than 2,000,000 items/);
  });

  it('stops through map and sort_by, whose expressions the library evaluates element by element', () => {
    stopped(numbers(2_000), `map(&[$,$,$,$,$,$,$,$,$,$][], @)[][] | length(@)`, /more than [\d,]+ (steps|items)/);
  });

  it('stops a result that is small in memory but enormous written out (shared parts repeated)', () => {
    stopped({ o: { s: 'x'.repeat(1_000) }, xs: numbers(20_000) }, 'xs[*].[$.o]', /result is more than 16,000,000 characters written out/);
  });
});

describe('a function whose output can outgrow its input', () => {
  it.each([
    ['pad_left', "pad_left('', `1000000000`)"],
    ['pad_right', "pad_right('x', `1000000000`, 'y')"],
    ['replace', "replace(a, '', join('', [b,b,b,b,b,b,b,b,b,b]))"],
    ['join', "join(a, [a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a])"],
    ['to_string', 'to_string([@,@,@,@,@,@,@,@,@,@,@,@,@,@,@,@,@,@,@,@])'],
  ])('measures %s before it runs', (_, query) => {
    const value = { a: 'x'.repeat(900_000), b: 'y'.repeat(1_000), list: numbers(100_000) };
    stopped(value, query, /makes a string of more than [\d,]+ characters/);
  });
});

describe('ordinary queries', () => {
  const doc = { items: numbers(100_000).map((i) => ({ price: i % 20, name: `n${i}`, tags: ['a', 'b'] })) };

  it.each([
    ['a filter and projection over 100,000 items', 'items[?price > `10`].name'],
    ['a sort and a slice', 'sort_by(items, &price)[-3:].name'],
    ['a flatten of every tag', 'length(items[].tags[])'],
    ['functions on strings', "join(',', items[:3].name)"],
    ['a let binding', 'let $n = length(items) in items[?price == `0`] | length(@)'],
  ])('runs %s as the library does', (_, query) => {
    expect(bounded(doc, query)).toEqual(search(doc as never, query));
  });

  it('scales the limits with the text: every item of a text past the base budget is selected', () => {
    const big = { xs: numbers(2_500_000) };
    const text = JSON.stringify(big);
    expect(text.length).toBeGreaterThan(16_000_000);
    expect((boundedSearch(big, 'xs', text.length) as number[]).length).toBe(2_500_000);
    expect(() => boundedSearch(big, 'xs', 1_000)).toThrow(QueryBudgetExceeded);
  });

  it('leaves the library as it was between queries: a plain search is not counted', () => {
    const value = numbers(1_500_000);
    expect(() => boundedSearch(value, '[*].[@,@]', 1_000)).toThrow(/more than 3,000,000 steps/);
    expect((search(value as never, '[*].[@,@]') as unknown[]).length).toBe(1_500_000);
  });
});
