/**
 * Build: everything about a forge request that can be checked without
 * running it — the schemas compile, the code parses, the composed tools
 * exist for the forging session (and are allowed), form no cycle and are
 * passed arguments they take, the name collides with nothing, the size
 * limits hold.
 *
 * Tool names are one namespace for the whole agent: a name another
 * session's forged tool holds is refused as taken, and that is all the
 * answer tells of it. Composing such a tool is answered exactly as
 * composing a name that exists nowhere.
 */
import { Script } from 'node:vm';
import type { ToolRegistry } from '../registry.ts';
import { checkToolName } from '../names.ts';
import { backtrackingPatternsCompiled, schemaProblem } from '../validation.ts';
import { stepArgsProblems } from '../yaml/step-args.ts';
import { checkedInputSchema, pointer, unprotectedPatterns } from '../local-schema.ts';
import { composeDefinition, requestPath } from './compose-definition.ts';
import { MAX_CODE_BYTES, MAX_SCHEMA_CHARS, MAX_TEST_CASES, type EmergentSettings, type ForgeRequest } from './forge-request.ts';
import { readAllowlist } from './forged-tool.ts';
import { invalidInputNames } from './input-names.ts';
import { visibleTo } from './forged-mark.ts';
import { unprotectedPattern } from '../../regexp-safety.ts';
import { refAt } from './schema-refs.ts';

export const FORGE_TOOL_NAME = 'forge_tool';

export interface ForgeProblem {
  code: string;
  message: string;
  hint?: string;
}

/** `session`: the forging caller's (undefined: a caller without one, forging for the agent). */
export function buildStep(request: ForgeRequest, registry: ToolRegistry, settings: EmergentSettings, session: string | undefined): ForgeProblem[] {
  const problems: ForgeProblem[] = [];
  const nameProblem = checkToolName(request.name, 'custom');
  if (nameProblem) problems.push({ code: 'FORGE_TOOL_NAME', message: nameProblem });
  if (registry.has(request.name)) {
    problems.push({ code: 'FORGE_TOOL_COLLISION', message: `a tool named "${request.name}" already exists`, hint: 'choose another name' });
  }
  for (const key of ['inputSchema', 'outputSchema'] as const) {
    // Before anything compiles it: compiling is what the limit bounds.
    const chars = JSON.stringify(request[key]).length;
    if (chars > MAX_SCHEMA_CHARS) {
      problems.push({ code: 'FORGE_FORGE_LIMIT', message: `${key} is ${chars} characters of JSON; the limit is ${MAX_SCHEMA_CHARS}`, hint: 'describe the arguments more briefly; the code can check the rest' });
      continue;
    }
    const problem = schemaProblem(request[key]);
    if (problem) problems.push({ code: 'FORGE_SCHEMA_INVALID', message: `${key} is not a valid JSON Schema: ${problem}` });
    // Checked on the server's thread at every call: only what the linear-time engine can take over (regexp-safety.ts).
    const walked = unprotectedPatterns(request[key]);
    // And what the walk does not step into but ajv compiles: a pattern reached by a $ref to anywhere in the schema.
    const reached = problem ? [] : backtrackingPatternsCompiled(request[key]).filter((pattern) => !walked.some((w) => w.pattern === pattern));
    for (const { at, pattern, why } of [...walked, ...reached.map((pattern) => ({ at: pointerTo(request[key], pattern), pattern, why: unprotectedPattern(pattern)! }))]) {
      problems.push({ code: 'FORGE_SCHEMA_INVALID', message: `${key}${at}: the pattern ${JSON.stringify(pattern)} uses ${why}, which could hold the server for as long as it backtracks`, hint: 'write the pattern without backreferences or lookarounds, or check the value in the code' });
    }
  }
  for (const key of ['inputSchema', 'outputSchema'] as const) {
    const at = refAt(request[key]);
    if (at !== undefined) {
      problems.push({
        code: 'FORGE_SCHEMA_INVALID',
        message: `${key}${at}: a $ref reuses a schema, and schemas that reuse each other (two branches of an anyOf naming one definition, and so on) make checking one small argument take exponential time on the server's thread`,
        hint: 'write each subschema out where it is used',
      });
    }
  }
  if (request.inputSchema.type !== 'object') problems.push({ code: 'FORGE_SCHEMA_INVALID', message: 'inputSchema must describe an object (type: object): a tool takes named arguments' });
  // A composition's inputs are YAML parameters, whose own check names them; sandboxed code's are not checked elsewhere.
  if (request.implementation.mode === 'sandbox') {
    for (const name of invalidInputNames(request.inputSchema)) {
      problems.push({ code: 'FORGE_SCHEMA_INVALID', message: `inputSchema property ${JSON.stringify(name)} is not a parameter name`, hint: 'start with a letter or "_" and use only letters, digits, "_" and "-"' });
    }
  }
  if (request.testCases.length > MAX_TEST_CASES) problems.push({ code: 'FORGE_FORGE_LIMIT', message: `${request.testCases.length} test cases; the limit is ${MAX_TEST_CASES}` });

  const impl = request.implementation;
  const usable = (tool: string, where: string) => {
    if (tool === FORGE_TOOL_NAME) return problems.push({ code: 'FORGE_FORGE_TOOL', message: `${where}: a forged tool may not call forge_tool` });
    if (tool === request.name) return problems.push({ code: 'FORGE_TOOL_CYCLE', message: `${where}: the tool calls itself` });
    const found = registry.get(tool);
    if (!found || !visibleTo(found, session)) return problems.push({ code: 'FORGE_TOOL_UNKNOWN', message: `${where}: no tool named "${tool}"`, hint: 'a forged tool composes tools the agent has' });
    // An agent-tier tool runs in every session, and there its calls reach what that session sees.
    if (request.scope === 'agent' && !visibleTo(found, undefined)) {
      return problems.push({ code: 'FORGE_FORGE_SCOPE', message: `${where}: "${tool}" is this session's own tool, and a tool forged with scope: agent is called from every session`, hint: 'forge it with scope: session, or compose only tools every session has' });
    }
    if (settings.allow_tools.length && !settings.allow_tools.includes(tool)) {
      return problems.push({ code: 'FORGE_FORGE_NOT_ALLOWED', message: `${where}: "${tool}" is not one of the tools forged tools may use`, hint: `emergent.allow_tools: ${settings.allow_tools.join(', ')}` });
    }
    const cycle = reaches(registry, tool, request.name);
    if (cycle) problems.push({ code: 'FORGE_TOOL_CYCLE', message: `${where}: "${tool}" leads back to "${request.name}" (${cycle.join(' → ')})` });
  };

  if (impl.mode === 'sandbox') {
    const bytes = Buffer.byteLength(impl.code);
    if (bytes > MAX_CODE_BYTES) problems.push({ code: 'FORGE_FORGE_LIMIT', message: `the code is ${bytes} bytes; the limit is ${MAX_CODE_BYTES}` });
    else {
      try {
        // Compiling parses without running anything.
        new Script(impl.code, { filename: `${request.name}.js` });
      } catch (err) {
        problems.push({ code: 'FORGE_CODE_SYNTAX', message: `the code does not parse: ${(err as Error).message}` });
      }
      if (!/\bexecute\b/.test(impl.code)) problems.push({ code: 'FORGE_CODE_ENTRY', message: 'the code defines no function execute(input)', hint: 'write: function execute(input) { ... return result; }' });
    }
    const allow = readAllowlist(impl.allowlist);
    allow.tools.forEach((tool) => usable(tool, `allowlist tool:${tool}`));
    for (const host of allow.hosts) {
      if (!/^[a-z0-9.-]+$/.test(host)) problems.push({ code: 'FORGE_FORGE_ALLOWLIST', message: `fetch:${host} is not a host name`, hint: 'fetch:api.example.com' });
    }
  } else {
    impl.steps.forEach((step, i) => usable(step.tool, `implementation.steps[${i}]`));
    if (!problems.some((p) => p.code === 'FORGE_TOOL_UNKNOWN')) {
      const composed = composeDefinition(request);
      for (const message of composed.problems) problems.push({ code: 'FORGE_COMPOSE_INVALID', message });
      // Arguments a step always passes wrong would fail every call: refused here, as a project's build does.
      for (const problem of composed.definition ? stepArgsProblems(composed.definition, (tool) => checkedInputSchema(registry.get(tool))) : []) {
        problems.push({ code: 'FORGE_STEP_ARGS', message: `${requestPath(problem.path)}: ${problem.message}`, hint: problem.hint });
      }
    }
  }
  return problems;
}

/** The path from `from` to `target` through composedOf, if there is one. */
function reaches(registry: ToolRegistry, from: string, target: string, seen = new Set<string>()): string[] | undefined {
  if (from === target) return [from];
  if (seen.has(from)) return undefined;
  seen.add(from);
  for (const next of registry.get(from)?.composedOf ?? []) {
    const path = reaches(registry, next, target, seen);
    if (path) return [from, ...path];
  }
  return undefined;
}

/** Where in `schema` a `pattern` (or a patternProperties key) is `pattern`, looked for everywhere ajv may reach: a JSON pointer, or "" when not found. */
function pointerTo(schema: unknown, pattern: string): string {
  const pending: [unknown, string][] = [[schema, '']];
  while (pending.length) {
    const [node, at] = pending.shift()!;
    if (node === null || typeof node !== 'object') continue;
    for (const [key, value] of Object.entries(node)) {
      const here = `${at}/${pointer(key)}`;
      if (key === 'pattern' && value === pattern) return here;
      if (key === pattern && at.endsWith('/patternProperties')) return here;
      pending.push([value, here]);
    }
  }
  return '';
}
