import { fail, ok } from '../model.ts';
import { defineBuiltin } from './define.ts';
import { findJsonSyntaxError } from '../../json-syntax.ts';
import { textPosition } from '../../text-position.ts';
import { boundedSearch, QueryBudgetExceeded } from './json/bounded-query.ts';

export default defineBuiltin({
  spec: {
    name: 'json_parse',
    description: [
      'Parse JSON text, optionally select part of it with a JMESPath query (the JMESPath Community Edition: e.g. `items[?price > `10`].name`, `length(users)`, `sort_by(items, &date)[-1]`), and pretty-print the result.',
      'Returns `value` (the parsed or selected data) and `pretty` (it as indented JSON, `indent` spaces, default 2). Invalid JSON is an error giving the line and column; an invalid query is an error naming the problem; a query that would make more than about two million items or a 16 MB string (more for a text past a megabyte) is stopped with an error.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      required: ['text'],
      additionalProperties: false,
      properties: {
        text: { type: 'string', description: 'The JSON text.' },
        query: { type: 'string', minLength: 1, description: 'A JMESPath expression selecting from the parsed value.' },
        indent: { type: 'integer', minimum: 0, maximum: 8, default: 2, description: 'Spaces per indentation level in `pretty` (0: one line).' },
      },
    },
  },
  create: () => ({
    async execute(args) {
      const { text, query, indent } = args;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        const at = locateSyntaxError(text);
        return fail(
          'FORGE_JSON_SYNTAX',
          at ? `invalid JSON at line ${at.line}, column ${at.column}: ${at.problem}\n${at.excerpt}` : `invalid JSON: ${(err as Error).message}`,
          'JSON needs double-quoted names and strings, and allows no trailing commas or comments',
        );
      }
      if (query !== undefined) {
        try {
          value = boundedSearch(value, query, text.length);
        } catch (err) {
          if (err instanceof QueryBudgetExceeded) {
            return fail('FORGE_JSON_QUERY_LIMIT', `JMESPath query "${query}" stopped: ${err.message}`, 'select less: filter ([?…]) before projecting, or split the work into several calls');
          }
          return fail('FORGE_JSON_QUERY', `invalid JMESPath query "${query}": ${(err as Error).message}`, 'see jmespath.site for the syntax; literals go in backticks, e.g. [?age > `30`]');
        }
      }
      return ok({ value, pretty: JSON.stringify(value, null, indent) ?? 'null' });
    },
  }),
});

/** Where JSON.parse gave up, with line and column and the line itself under a caret. */
function locateSyntaxError(text: string): { line: number; column: number; problem: string; excerpt: string } | undefined {
  const found = findJsonSyntaxError(text);
  if (!found) return undefined;
  const { line, column, lineText } = textPosition(text, found.offset);
  return { line, column, problem: found.problem, excerpt: `${lineText}\n${' '.repeat(Math.max(0, column - 1))}^` };
}
