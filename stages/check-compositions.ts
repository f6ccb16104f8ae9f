/**
 * Stage: check compositions. The tools that call other tools (composedOf)
 * must form no cycle — printed as a → b → a — and no chain deeper than the
 * runtime allows. The registry refuses both at run time too; the build
 * refuses them before anything ships. A YAML step's `args:` must fit the
 * tool it calls: names it takes, its required ones, and literal values of
 * the declared types (what every call would otherwise fail on).
 */
import { error, type Location } from '../runtime/diagnostics.ts';
import { MAX_COMPOSITION_DEPTH } from '../runtime/tools/limits.ts';
import { checkArguments } from '../runtime/tools/validation.ts';
import type { JSONSchema } from '../runtime/tools/model.ts';
import type { ArgTemplate } from '../runtime/tools/yaml/definition.ts';
import type { ProjectTool } from './project-tool.ts';
import type { StageContext } from './stage.ts';

export function checkCompositions(tools: readonly ProjectTool[], ctx: StageContext): void {
  const byName = new Map(tools.map((t) => [t.spec.name, t]));
  checkStepArguments(tools, byName, ctx);
  const callees = (name: string) => (byName.get(name)?.spec.composedOf ?? []).filter((c) => byName.has(c));
  /** Where `caller` names `callee`: its tool: step, or the tool itself. */
  const whereCalls = (caller: string, callee: string): Location => {
    const tool = byName.get(caller)!;
    const step = tool.yaml?.definition.toolSteps.find((s) => s.name === callee);
    return step ? tool.yaml!.locate(step.path) : tool.at;
  };

  // Cycles: depth-first search; each cycle is reported once, from its smallest name.
  const state = new Map<string, 'open' | 'done'>();
  const reported = new Set<string>();
  let cyclic = false;
  const visit = (name: string, path: string[]) => {
    state.set(name, 'open');
    for (const next of callees(name)) {
      if (state.get(next) === 'open') {
        cyclic = true;
        const cycle = path.slice(path.indexOf(next));
        const start = cycle.indexOf([...cycle].sort()[0]);
        const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
        const key = rotated.join('\0');
        if (reported.has(key)) continue;
        reported.add(key);
        const shown = [...rotated, rotated[0]].join(' → ');
        ctx.report(error('FORGE_TOOL_CYCLE', `tools call each other in a cycle: ${shown}`, whereCalls(rotated[rotated.length - 1], rotated[0]), 'a tool may not call, directly or through others, a tool that calls it'));
      } else if (!state.has(next)) {
        visit(next, [...path, next]);
      }
    }
    state.set(name, 'done');
  };
  for (const name of [...byName.keys()].sort()) if (!state.has(name)) visit(name, [name]);
  if (cyclic) return;

  // Depth: the longest chain of calls from each tool (memoized; the graph has no cycle now).
  const longest = new Map<string, string[]>();
  const chainFrom = (name: string): string[] => {
    let chain = longest.get(name);
    if (chain) return chain;
    chain = [name];
    for (const next of callees(name)) {
      const sub = chainFrom(next);
      if (sub.length + 1 > chain.length) chain = [name, ...sub];
    }
    longest.set(name, chain);
    return chain;
  };
  // A call at depth d sits d calls below the first; the registry refuses depth > MAX.
  const tooDeep = [...byName.keys()].sort().filter((name) => chainFrom(name).length - 1 > MAX_COMPOSITION_DEPTH);
  const calledByTooDeep = new Set(tooDeep.flatMap((name) => callees(name)));
  for (const name of tooDeep) {
    if (calledByTooDeep.has(name)) continue; // reported through its caller's longer chain
    const chain = chainFrom(name);
    ctx.report(
      error('FORGE_TOOL_DEPTH', `calls nest ${chain.length - 1} deep, deeper than the limit of ${MAX_COMPOSITION_DEPTH}: ${chain.join(' → ')}`, whereCalls(chain[0], chain[1]), 'flatten the composition: call the inner tools from fewer levels'),
    );
  }
}

/** Each YAML step's `args:` against the input schema of the tool it calls. */
function checkStepArguments(tools: readonly ProjectTool[], byName: ReadonlyMap<string, ProjectTool>, ctx: StageContext): void {
  for (const tool of tools) {
    const yaml = tool.yaml;
    if (!yaml) continue;
    for (const step of yaml.definition.steps) {
      const action = step.action;
      if (action.kind !== 'tool' || !action.args) continue;
      const schema = byName.get(action.tool)?.spec.inputSchema;
      if (!schema) continue; // a missing tool is reported where dependencies are resolved
      const properties = (schema.properties ?? {}) as Record<string, JSONSchema>;
      const at = (key?: string) => yaml.locate(key === undefined ? [...step.path, 'args'] : [...step.path, 'args', key]);
      const hint = `"${action.tool}" takes: ${Object.keys(properties).join(', ') || 'no arguments'}`;
      for (const key of Object.keys(action.args)) {
        if (!(key in properties) && schema.additionalProperties === false) {
          ctx.report(error('FORGE_STEP_ARGS', `step "${step.name}" passes "${key}", which "${action.tool}" does not take`, at(key), hint));
        }
      }
      const missing = ((schema.required ?? []) as string[]).filter((name) => !(name in action.args!) && properties[name]?.default === undefined);
      if (missing.length) ctx.report(error('FORGE_STEP_ARGS', `step "${step.name}" does not pass ${missing.map((m) => `"${m}"`).join(', ')}, which "${action.tool}" needs`, at(), hint));
      // Values written out in full (no {placeholder}) are what every call sends: checked as the registry will.
      for (const [key, value] of Object.entries(action.args)) {
        const literal = literalValue(value);
        if (literal === NOT_LITERAL || !properties[key]) continue;
        // The whole schema (its $defs stay reachable), nothing required: only this value is judged.
        let checked;
        try {
          checked = checkArguments(optionalCopy(schema), { [key]: literal });
        } catch {
          continue; // a schema the validator cannot compile is reported where schemas are checked
        }
        if (!checked.ok) ctx.report(error('FORGE_STEP_ARGS', `step "${step.name}" passes ${key}=${JSON.stringify(literal)} to "${action.tool}": ${checked.errors.join('; ')}`, at(key), hint));
      }
    }
  }
}

/** The schema with nothing required, one per schema: the validator compiles (and keeps) each object it is given. */
const optionalCopies = new WeakMap<JSONSchema, JSONSchema>();
function optionalCopy(schema: JSONSchema): JSONSchema {
  let copy = optionalCopies.get(schema);
  if (!copy) optionalCopies.set(schema, (copy = { ...schema, required: [] }));
  return copy;
}

const NOT_LITERAL = Symbol('not literal');

/** The value an argument always has, or NOT_LITERAL when a {placeholder} fills any part of it. */
function literalValue(arg: ArgTemplate): unknown {
  if ('literal' in arg) return arg.literal;
  if ('object' in arg) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(arg.object)) {
      const value = literalValue(v);
      if (value === NOT_LITERAL) return NOT_LITERAL;
      out[k] = value;
    }
    return out;
  }
  if ('array' in arg) {
    const out = arg.array.map(literalValue);
    return out.includes(NOT_LITERAL) ? NOT_LITERAL : out;
  }
  // A template of text only (`times: lots`) is that text.
  return arg.segments.every((segment) => segment.kind === 'text') ? arg.segments.map((segment) => (segment.kind === 'text' ? segment.text : '')).join('') : NOT_LITERAL;
}
