/**
 * A YAML tool as a Tool: runs its steps in order (or, with parallel: true,
 * each as soon as the steps it reads from are done), skips steps whose
 * when: is false, reuses cached step results within the call, stops at the
 * first failing step (unless it may fail), and builds the result from
 * output: or the last step that ran.
 */
import { parseOutput } from '../custom/custom-tool.ts';
import { fail, ok, toSpec, type Tool, type ToolContext, type ToolResult, type ToolSpec } from '../model.ts';
import { resolvePython } from '../custom/python-interpreter.ts';
import { toolEnvironment } from '../custom/tool-env.ts';
import { evaluate, truthy } from './condition.ts';
import type { YamlStep, YamlToolDefinition } from './definition.ts';
import { ValueRefused } from './escape.ts';
import { ForgeError } from '../../diagnostics.ts';
import { prepareStep, type PrepareContext, type PreparedStep } from './prepare-step.ts';
import { runPreparedStep } from './run-step.ts';
import { RunValues, SKIPPED, type StepResult } from './run-values.ts';
import { linesInYamlFile } from './script-location.ts';
import { references, renderOutput, textOf, type Resolve } from './template.ts';

export interface YamlToolHost {
  workDir: string;
  envPassthrough?: readonly string[];
  maxOutputBytes?: number;
  /**
   * The most characters of values one call may put into its steps' arguments, conditions and output (a
   * forged composition's: its templates are someone else's, and twenty steps each passing on two copies
   * of the last one's result made a 1,000-character argument half a gigabyte, and the server ran out of memory).
   */
  maxResolvedChars?: number;
  /** Called with each command just before it runs (`forge tool run --show-command`). */
  onCommand?: (event: CommandEvent) => void;
}

export interface CommandEvent {
  tool: string;
  step: string;
  prepared: PreparedStep;
}

export interface YamlTool extends Tool {
  definition: YamlToolDefinition;
  /** What each step would run with these arguments, without running anything (results of earlier steps show as <step.output>). */
  plan(args: Record<string, unknown>): PlannedStep[];
}

export interface PlannedStep {
  step: string;
  when?: string;
  prepared?: PreparedStep;
  /** Why the step cannot be shown (a value it would refuse). */
  problem?: string;
}

export function isYamlTool(tool: Tool | undefined): tool is YamlTool {
  return tool !== undefined && 'plan' in tool && 'definition' in tool;
}

/** The spec a YAML tool records in agent.json (composedOf: the tools its steps call, by name). */
export function yamlToolSpec(definition: YamlToolDefinition, source: ToolSpec['source']): ToolSpec {
  const interpreters = new Set<string>();
  for (const { action } of definition.steps) {
    if (action.kind === 'bash' || action.kind === 'sh' || action.kind === 'python') interpreters.add(action.kind);
    if (action.kind === 'script' && 'language' in action.body) interpreters.add(action.body.language);
  }
  return toSpec({
    name: definition.name,
    description: definition.description,
    category: definition.category,
    inputSchema: definition.inputSchema,
    tags: definition.tags,
    composedOf: [...new Set(definition.toolSteps.map((t) => t.name))],
    singleConfirmation: definition.singleConfirmation,
    timeoutMs: definition.timeoutMs,
    source: source && { ...source, ...(interpreters.size ? { interpreters: [...interpreters].sort() } : {}) },
  });
}

/**
 * A resolver that counts the characters of the values it hands out (a value counts as the text it renders
 * as) and refuses the one that takes a call past `max`: checked before a template joins them, so what
 * was refused was never built.
 */
function budgeted(resolve: Resolve, max: number, tool: string): Resolve {
  let used = 0;
  return (ref) => {
    const value = resolve(ref);
    used += typeof value === 'string' ? value.length : textOf(value).length;
    if (used > max) {
      throw new ForgeError('FORGE_TOOL_OUTPUT_LIMIT', `tool "${tool}" put more than ${max} characters of values into its steps' arguments and its output in one call ({${ref.text}} went past it)`, 'pass smaller values from step to step, or fewer copies of them');
    }
    return value;
  };
}

/** `file`: the tool's YAML file, where an error in a python: step is placed. */
export function createYamlTool(spec: ToolSpec, definition: YamlToolDefinition, host: YamlToolHost, file?: string): YamlTool {
  const needsPython = definition.steps.some((s) => s.action.kind === 'python');
  const baseEnv = () => toolEnvironment({ workDir: host.workDir, passthrough: host.envPassthrough });
  let calls = 0;

  async function execute(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    let python = 'python3';
    if (needsPython) {
      try {
        python = await resolvePython();
      } catch (err) {
        return fail('FORGE_PYTHON_MISSING', `tool "${spec.name}" needs Python: ${(err as Error).message}`, 'install Python 3, or set FORGE_PYTHON to an interpreter');
      }
    }
    const call = ++calls;
    const values = new RunValues((args ?? {}) as Record<string, unknown>, definition.steps);
    const resolve = host.maxResolvedChars === undefined ? values.resolve : budgeted(values.resolve, host.maxResolvedChars, spec.name);
    const context: PrepareContext = { workDir: host.workDir, baseEnv: baseEnv(), python };
    const controller = new AbortController();
    const stop = () => controller.abort();
    ctx.signal.addEventListener('abort', stop, { once: true });
    const cache = new Map<string, Promise<StepResult>>();
    const done = new Map<string, Promise<StepResult>>();
    let failure: ToolResult | undefined;

    const runStep = async (step: YamlStep, index: number): Promise<StepResult> => {
      if (definition.parallel) await Promise.all(step.needs.map((n) => done.get(n)));
      if (failure || controller.signal.aborted) return SKIPPED;
      if (step.when && !truthy(evaluate(step.when, resolve))) return record(step, SKIPPED);
      let prepared: PreparedStep;
      try {
        prepared = prepareStep(definition, step, resolve, context);
      } catch (err) {
        if (!(err instanceof ValueRefused)) throw err;
        return record(step, { ...SKIPPED, status: 'failed', error: { code: 'FORGE_YAML_VALUE', message: err.message } });
      }
      const key = step.cache ? JSON.stringify(prepared) : undefined;
      let running = key ? cache.get(key) : undefined;
      if (!running) {
        host.onCommand?.({ tool: spec.name, step: step.name, prepared });
        running = runPreparedStep(prepared, { ctx, signal: controller.signal, maxOutputBytes: host.maxOutputBytes, scriptName: `${call}-${index}-${step.name}` });
        if (key) cache.set(key, running);
      }
      return record(step, await running);
    };

    const record = (step: YamlStep, result: StepResult): StepResult => {
      values.record(step.name, result);
      if (result.status === 'failed' && !step.continueOnError && !failure) {
        failure = stepFailure(spec.name, step, result, file && spec.source ? { file, shown: spec.source.path } : undefined);
        controller.abort();
      }
      return result;
    };

    try {
      if (definition.parallel) {
        definition.steps.forEach((step, i) => done.set(step.name, runStep(step, i)));
        await Promise.all(done.values());
      } else {
        for (const [i, step] of definition.steps.entries()) {
          await runStep(step, i);
          if (failure) break;
        }
      }
    } finally {
      ctx.signal.removeEventListener('abort', stop);
    }
    if (failure) return failure;
    if (definition.output) {
      try {
        return ok(renderOutput(definition.output, resolve, definition.outputJson));
      } catch (err) {
        // A value that cannot stand where output: puts it (text where a JSON value goes): fail rather than return broken JSON.
        if (!(err instanceof ForgeError) || err.code !== 'FORGE_YAML_VALUE') throw err;
        return fail(err.code, `tool "${spec.name}": ${err.message}`, err.hint);
      }
    }
    const last = [...definition.steps].reverse().find((s) => values.result(s.name)?.status !== 'skipped');
    if (!last) return ok(null);
    // The tool's result is what the last step's references read: a JSON object or array (parsed exactly), else the exact output minus one trailing newline; a called tool's value as it is.
    const result = values.result(last.name)!;
    return ok(result.fromTool ? result.output : parseOutput(result.stdout));
  }

  function plan(args: Record<string, unknown>): PlannedStep[] {
    const values = new RunValues(args, definition.steps);
    const isStepReference = (root: string) => definition.steps.some((s) => s.name === root || s.outputVar === root);
    // Results of earlier steps are not known before the call: they show as <step.output>.
    const placeholder: Resolve = (ref) => (isStepReference(ref.root) ? `<${ref.text}>` : values.resolve(ref));
    const context: PrepareContext = { workDir: host.workDir, baseEnv: baseEnv(), python: 'python3' };
    return definition.steps.map((step) => {
      const planned: PlannedStep = { step: step.name, ...(step.whenSource ? { when: step.whenSource } : {}) };
      try {
        planned.prepared = prepareStep(definition, step, placeholder, context);
      } catch (err) {
        if (!(err instanceof ValueRefused)) throw err;
        planned.problem = err.message;
      }
      return planned;
    });
  }

  return { ...spec, definition, execute, plan };
}

const CONTINUE_HINT = 'add continue-on-error: true to the step to go on after a failure';

/**
 * Codes that describe a call rather than what came of it: passed on as the meta-tool's own, they would
 * tell its caller that the meta-tool is unknown, or that the caller's arguments were wrong.
 */
const CALL_CODES: ReadonlySet<string> = new Set(['FORGE_TOOL_UNKNOWN', 'FORGE_TOOL_ARGS', 'FORGE_TOOL_NOT_COMPOSED']);

function stepFailure(tool: string, step: YamlStep, result: StepResult, yamlFile?: { file: string; shown: string }): ToolResult {
  const failure = stepError(tool, step, result, yamlFile);
  // A refusal that may pass later (a busy process slot, a sub-tool's open circuit) keeps saying when.
  const retryAfterSeconds = result.error?.retryAfterSeconds;
  if (!failure.ok && retryAfterSeconds !== undefined) failure.error.retryAfterSeconds = retryAfterSeconds;
  return failure;
}

function stepError(tool: string, step: YamlStep, result: StepResult, yamlFile?: { file: string; shown: string }): ToolResult {
  const error = result.error ?? { code: 'FORGE_YAML_STEP_EXIT', message: 'failed' };
  // A tool of one action (bash: with no steps:) has one step, named for no one: its failure is the tool's.
  const where = step.path.length === 0 ? `tool "${tool}" failed` : `tool "${tool}" failed at step "${step.name}"`;
  const steps = step.path.length > 0;
  if (step.action.kind === 'tool') {
    const callee = step.action.tool;
    // The inner code says what went wrong (FORGE_APPROVAL_REQUIRED, FORGE_TOOL_TIMEOUT...); the message says where.
    const inner = error.message.startsWith(`tool "${callee}" `) ? error.message : `tool "${callee}" failed: ${error.message}`;
    const missing = error.code === 'FORGE_TOOL_UNKNOWN';
    return fail(
      CALL_CODES.has(error.code) ? 'FORGE_YAML_STEP_FAILED' : error.code,
      `${where}: ${inner}`,
      missing ? `the step calls a tool this agent does not have (removed or renamed since?): bring it back, or change the step` : (error.hint ?? (steps ? CONTINUE_HINT : undefined)),
      [error.code, error.details].filter(Boolean).join('\n'),
    );
  }
  const stderr = result.stderr.trim();
  if (result.python && error.code === 'FORGE_YAML_STEP_EXIT') return pythonStepError(where, step, result, result.python, stderr, yamlFile);
  return fail(
    error.code === 'FORGE_YAML_STEP_EXIT' ? 'FORGE_YAML_STEP_FAILED' : error.code,
    `${where}: ${error.message}`,
    error.hint ?? (error.code === 'FORGE_YAML_STEP_EXIT' && steps ? CONTINUE_HINT : undefined),
    stderr || undefined,
  );
}

/**
 * A python: step that failed with a Python error: the message says where in the YAML file (the
 * temp script's path and lines mean nothing to the author), and so does the traceback. A script
 * that does not compile fails every call: continue-on-error would not help it.
 */
function pythonStepError(where: string, step: YamlStep, result: StepResult, python: NonNullable<StepResult['python']>, stderr: string, yamlFile?: { file: string; shown: string }): ToolResult {
  // The YAML file is read once for the message and every frame of the traceback.
  const inFile = yamlFile ? linesInYamlFile(yamlFile.file, [...step.path, 'python']) : () => undefined;
  // Each frame in the script: `File "/tmp/.../1-2-format.py", line 7` → `File "tools/t.yaml", line 14 (line 3 of the python: script)`.
  const placed = (text: string) =>
    text.split(`File ${JSON.stringify(python.scriptFile)}, line `).reduce((out, part) => {
      const n = /^\d+/.exec(part)?.[0];
      const line = python.lines[Number(n) - 1] ?? Number(n);
      const fileLine = inFile(line);
      const frame = fileLine ? `File ${JSON.stringify(yamlFile!.shown)}, line ${fileLine} (line ${line} of the python: script)` : `File "python: script", line ${line}`;
      return `${out}${frame}${part.slice(n?.length ?? 0)}`;
    });
  const fileLine = inFile(python.line);
  const at = `${fileLine ? `${yamlFile!.shown}:${fileLine}, ` : ''}line ${python.line} of the python: script`;
  const details = placed(stderr) || undefined;
  if (python.syntax) {
    const raw = step.action.kind === 'python' && references(step.action.script.template).some((s) => s.raw);
    const hint = raw ? 'a {RAW:...} value is inserted as code there: check the value, or use {NAME}, which inserts it as a Python literal' : 'fix the script there (forge validate and forge build report this before any call)';
    return fail('FORGE_YAML_STEP_FAILED', `${where}: its python: script does not compile (${at})`, hint, details);
  }
  return fail('FORGE_YAML_STEP_FAILED', `${where} (${at}): ${placed(result.error?.message ?? 'failed')}`, step.path.length > 0 ? CONTINUE_HINT : undefined, details);
}
