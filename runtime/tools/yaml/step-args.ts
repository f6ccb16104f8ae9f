/**
 * A tool step's `args:` against the input schema of the tool it calls: the
 * names it takes, its required ones, and values written out in full checked
 * as the registry will check them. What every call would otherwise fail on,
 * found before the tool ships: at build for a project's YAML tools, in
 * forge_tool's build step for a forged composition.
 */
import { didYouMean } from '../../suggest.ts';
import { ownValue } from '../../own-value.ts';
import type { JSONSchema } from '../model.ts';
import { checkArguments, isExternal, markExternal } from '../validation.ts';
import type { ArgTemplate, PathSegment, YamlToolDefinition } from './definition.ts';

export interface StepArgsProblem {
  /** Where: the step's `args`, or one argument in it. */
  path: PathSegment[];
  message: string;
  /** What the called tool takes. */
  hint: string;
}

/** `inputSchemaOf` answers undefined for a tool it does not know (reported elsewhere, as a missing tool). */
export function stepArgsProblems(definition: YamlToolDefinition, inputSchemaOf: (tool: string) => JSONSchema | undefined): StepArgsProblem[] {
  const problems: StepArgsProblem[] = [];
  for (const step of definition.steps) {
    const action = step.action;
    if (action.kind !== 'tool' || !action.args) continue;
    const schema = inputSchemaOf(action.tool);
    if (!schema) continue;
    const properties = (schema.properties ?? {}) as Record<string, JSONSchema>;
    const at = (key?: string): PathSegment[] => (key === undefined ? [...step.path, 'args'] : [...step.path, 'args', key]);
    const hint = `"${action.tool}" takes: ${Object.keys(properties).join(', ') || 'no arguments'}`;
    const report = (message: string, key?: string, before?: string) => problems.push({ path: at(key), message, hint: before ? `${before} ${hint}` : hint });
    for (const key of Object.keys(action.args)) {
      // A misspelt name ("nam") is said as one, with the name it likely is.
      if (!Object.hasOwn(properties, key) && schema.additionalProperties === false) report(`step "${step.name}" passes "${key}", which "${action.tool}" does not take`, key, didYouMean(key, Object.keys(properties).filter((name) => !Object.hasOwn(action.args!, name))));
    }
    const missing = ((schema.required ?? []) as string[]).filter((name) => !Object.hasOwn(action.args!, name) && ownValue(properties, name)?.default === undefined);
    if (missing.length) report(`step "${step.name}" does not pass ${missing.map((m) => `"${m}"`).join(', ')}, which "${action.tool}" needs`);
    // Values written out in full (no {placeholder}) are what every call sends: checked as the registry will.
    for (const [key, value] of Object.entries(action.args)) {
      const literal = literalValue(value);
      if (literal === NOT_LITERAL || !ownValue(properties, key)) continue;
      // The whole schema (its $defs stay reachable), nothing required: only this value is judged.
      let checked;
      try {
        checked = checkArguments(optionalCopy(schema), { [key]: literal });
      } catch {
        continue; // a schema the validator cannot compile is reported where schemas are checked
      }
      if (!checked.ok) report(`step "${step.name}" passes ${key}=${JSON.stringify(literal)} to "${action.tool}": ${checked.errors.join('; ')}`, key);
    }
  }
  return problems;
}

/** The schema with nothing required, one per schema: the validator compiles (and keeps) each object it is given. */
const optionalCopies = new WeakMap<JSONSchema, JSONSchema>();
function optionalCopy(schema: JSONSchema): JSONSchema {
  let copy = optionalCopies.get(schema);
  if (!copy) {
    copy = { ...schema, required: [] };
    // An adapter's schema stays one: its copy is compiled as the original is (validation.ts's markExternal).
    if (isExternal(schema)) markExternal(copy);
    optionalCopies.set(schema, copy);
  }
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
