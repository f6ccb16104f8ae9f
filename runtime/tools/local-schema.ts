/**
 * The schemas an adapter tool's arguments and result are checked against
 * here. A `pattern` from an MCP server or an OpenAPI document runs on the
 * server's one thread at every call; V8's linear-time fallback
 * (regexp-safety.ts) takes over every pattern that engine can run, but not
 * a backreference, a lookaround or a Unicode property escape, so
 * `^(?=(a+)+$)` against forty a's and a "!" held every front end, /healthz
 * and SIGTERM. A forged tool with such a pattern is refused; an adapter's
 * tool is the service's, not ours to refuse, and the service checks its own
 * input — so such a pattern is left out of the check made here, and the
 * start says so (FORGE_ADAPTER_PATTERN). Every other pattern is checked as
 * before, and what clients are shown (tools/list, GET /tools, agent.json)
 * is the schema as the service declared it.
 */
import { warning, type Diagnostic } from '../diagnostics.ts';
import { unprotectedPattern } from '../regexp-safety.ts';
import type { JSONSchema, ToolSpec } from './model.ts';
import { SCHEMA_MAPS, SCHEMA_VALUES } from './schema-keywords.ts';
import { markExternal } from './validation.ts';
import { isRecord } from '../is-record.ts';

/** A pattern left out of the local check: where (a JSON pointer into the schema), the pattern, and why. */
export interface UncheckedPattern {
  at: string;
  pattern: string;
  why: string;
}

interface LocalSchema {
  schema: JSONSchema;
  unchecked: UncheckedPattern[];
  /** The schema's size as JSON when it is past MAX_LOCAL_SCHEMA_CHARS: then nothing of it is checked here. */
  oversized?: number;
}

/**
 * The most JSON text a service's schema may be and still be checked here.
 * ajv compiles a schema on the agent's thread at the tool's first call: 800
 * kB took seconds (a forged tool's schema is held to 64 KB for the same
 * reason). An OpenAPI operation's body with every $ref written out, or an
 * MCP server that sends megabytes, is left to the service to check.
 */
export const MAX_LOCAL_SCHEMA_CHARS = 128 * 1024;

/** One per schema object: the validator compiles (and keeps) each object it is given. */
const local = new WeakMap<JSONSchema, LocalSchema>();

/** `schema` without the patterns only the backtracking engine runs; `schema` itself when it has none. */
export function withoutUnprotectedPatterns(schema: JSONSchema): LocalSchema {
  let found = local.get(schema);
  const chars = found ? 0 : JSON.stringify(schema).length;
  if (!found && chars > MAX_LOCAL_SCHEMA_CHARS) {
    found = { schema: markExternal({}), unchecked: [], oversized: chars };
    local.set(schema, found);
  }
  if (!found) {
    const unchecked: UncheckedPattern[] = [];
    const pruned = prune(schema, '', unchecked) as JSONSchema;
    // Marked: ajv may still reach a pattern this walk does not (a $ref to anywhere in the schema), and
    // then treats it as matching (validation.ts's externalRegExp), not as one to run.
    found = { schema: markExternal(unchecked.length ? pruned : schema), unchecked };
    local.set(schema, found);
  }
  return found;
}

/** The patterns of `schema` only the backtracking engine runs, found where schemas are (never in `default` or `enum` data). */
export function unprotectedPatterns(schema: unknown): UncheckedPattern[] {
  return schema !== null && typeof schema === 'object' ? withoutUnprotectedPatterns(schema as JSONSchema).unchecked : [];
}

/** The schema `tool`'s arguments are checked against here: an adapter tool's without unprotected patterns, any other's as declared. */
export function checkedInputSchema(tool: ToolSpec): JSONSchema;
export function checkedInputSchema(tool: ToolSpec | undefined): JSONSchema | undefined;
export function checkedInputSchema(tool: ToolSpec | undefined): JSONSchema | undefined {
  if (!tool) return undefined;
  return fromOutside(tool) ? withoutUnprotectedPatterns(tool.inputSchema).schema : tool.inputSchema;
}

/** The schema `tool`'s result is checked against here (as checkedInputSchema). */
export function checkedOutputSchema(tool: ToolSpec): JSONSchema | undefined {
  return fromOutside(tool) && tool.outputSchema ? withoutUnprotectedPatterns(tool.outputSchema).schema : tool.outputSchema;
}

/**
 * An adapter's tool (its schemas are the service's), or a forged one (the
 * model's: forge_tool refused every such pattern ajv compiles, and a tool
 * forged before that check is held to it here).
 */
function fromOutside(tool: ToolSpec): boolean {
  return tool.adapter !== undefined || 'forged' in tool;
}

/** What an adapter tool's schemas hold that is not checked here, each with which schema ("input", "output"). */
function uncheckedPatterns(tool: ToolSpec): (UncheckedPattern & { schema: 'input' | 'output' })[] {
  if (!tool.adapter) return [];
  const input = withoutUnprotectedPatterns(tool.inputSchema).unchecked.map((u) => ({ ...u, schema: 'input' as const }));
  const output = tool.outputSchema ? withoutUnprotectedPatterns(tool.outputSchema).unchecked.map((u) => ({ ...u, schema: 'output' as const })) : [];
  return [...input, ...output];
}

/** What the start says, once, of an adapter tool whose schemas have patterns not checked here; undefined when they have none. */
export function uncheckedPatternsWarning(tool: ToolSpec): Diagnostic | undefined {
  const unchecked = uncheckedPatterns(tool);
  if (!unchecked.length) return undefined;
  const service = serviceOf(tool);
  const listed = unchecked.map((u) => `${u.schema} schema ${u.at}: ${JSON.stringify(u.pattern)} (${u.why})`).join('; ');
  return warning(
    'FORGE_ADAPTER_PATTERN',
    `tool "${tool.name}": ${unchecked.length === 1 ? 'a pattern' : 'patterns'} of ${service} only the backtracking regexp engine runs, which could hold the agent's one thread, ${unchecked.length === 1 ? 'is' : 'are'} not checked here: ${listed}`,
    {},
    `${service} still checks what it is sent; the rest of the schema is checked here as before`,
  );
}

/** What the start says, once, of an adapter tool with a schema too large to be checked here; undefined when none is. */
export function oversizedSchemaWarning(tool: ToolSpec): Diagnostic | undefined {
  if (!tool.adapter) return undefined;
  const oversized = (['input', 'output'] as const).flatMap((which) => {
    const schema = which === 'input' ? tool.inputSchema : tool.outputSchema;
    const chars = schema && withoutUnprotectedPatterns(schema).oversized;
    return chars ? [`its ${which} schema (${chars} characters of JSON)`] : [];
  });
  if (!oversized.length) return undefined;
  const service = serviceOf(tool);
  return warning(
    'FORGE_ADAPTER_SCHEMA',
    `tool "${tool.name}": ${oversized.join(' and ')} is past ${MAX_LOCAL_SCHEMA_CHARS} characters, which compiling would hold the agent's one thread for; it is not checked here`,
    {},
    `${service} still checks what it is sent`,
  );
}

function serviceOf(tool: ToolSpec): string {
  return tool.adapter?.kind === 'mcp' ? `MCP server "${tool.adapter.server}"` : `API "${tool.adapter?.api}"`;
}

/** A copy of the schema at `node` without unprotected patterns, stepping only where schemas are (not into `default` or `enum` data). */
function prune(node: unknown, at: string, unchecked: UncheckedPattern[]): unknown {
  if (Array.isArray(node)) return node.map((item, i) => prune(item, `${at}/${i}`, unchecked));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  let propertiesUnknown = false;
  for (const [key, value] of Object.entries(node)) {
    const here = `${at}/${pointer(key)}`;
    if (key === 'pattern' && typeof value === 'string') {
      const why = unprotectedPattern(value);
      if (why) unchecked.push({ at: here, pattern: value, why });
      else out[key] = value;
    } else if (key === 'patternProperties' && isRecord(value)) {
      const kept: Record<string, unknown> = {};
      for (const [pattern, schema] of Object.entries(value)) {
        const why = unprotectedPattern(pattern);
        if (why) unchecked.push({ at: `${here}/${pointer(pattern)}`, pattern, why });
        else kept[pattern] = prune(schema, `${here}/${pointer(pattern)}`, unchecked);
        propertiesUnknown ||= why !== undefined;
      }
      out[key] = kept;
    } else if (SCHEMA_MAPS.has(key) && isRecord(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, prune(schema, `${here}/${pointer(name)}`, unchecked)]));
    } else if (SCHEMA_VALUES.has(key)) {
      out[key] = prune(value, here, unchecked);
    } else {
      out[key] = value;
    }
  }
  // Which properties a left-out patternProperties key matched is not known here, so neither is which are
  // "additional": checking them would refuse arguments the service takes. The service checks them.
  if (propertiesUnknown) {
    delete out.additionalProperties;
    delete out.unevaluatedProperties;
  }
  return out;
}


/** A key as a JSON pointer segment. */
export function pointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
