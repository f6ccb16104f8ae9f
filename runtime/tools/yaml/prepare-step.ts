/**
 * Turns a step and the values of this call into exactly what will run: the
 * process and its arguments, the script text, the environment and the
 * working directory — or the tool and its arguments. Used to run a step,
 * and for `forge tool run --show-command / --dry-run`.
 */
import { realpathSync, statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { isWithin } from '../../guard/path-guard.ts';
import { PYTHON_TOOL_ENV } from '../custom/tool-env.ts';
import { renderArgv } from './argv.ts';
import type { ArgTemplate, EnvironmentEntry, YamlStep, YamlToolDefinition } from './definition.ts';
import { refuseUnholdable, ValueRefused } from './escape.ts';
import { renderScript, renderScriptLines, type CompiledScript } from './script.ts';
import { renderText, renderValue, type Reference, type Resolve, type Template } from './template.ts';

export type PreparedStep =
  | {
      kind: 'process';
      /** How the command was written (bash, sh, python, run, script). */
      form: 'bash' | 'sh' | 'python' | 'run' | 'script';
      /** The program and its arguments; SCRIPT_FILE stands for the script's temp file until it is written. */
      argv: string[];
      /** `lines`: for a python: step, the line of the step's script each line of `text` comes from (to place a traceback). */
      script?: { text: string; extension: string; lines?: number[] };
      env: Record<string, string>;
      /** The variables the tool itself sets (for display: env also holds PATH, HOME...). */
      toolEnv: Record<string, string>;
      cwd: string;
      /** Text written to the process's stdin (a step's input:). */
      stdin?: string;
      /** The step's own time limit. */
      timeoutMs?: number;
    }
  | { kind: 'tool'; tool: string; args: Record<string, unknown> };

export const SCRIPT_FILE = '\0script\0';

export interface PrepareContext {
  workDir: string;
  /** The environment a tool process gets before the tool adds its own (for ${VAR}). */
  baseEnv: Record<string, string>;
  python: string;
}

export function prepareStep(definition: YamlToolDefinition, step: YamlStep, resolve: Resolve, context: PrepareContext): PreparedStep {
  const prepared = prepareAction(definition, step, withFlags(definition, resolve), context);
  if (prepared.kind === 'process') {
    if (step.stdin) prepared.stdin = renderText(step.stdin, withFlags(definition, resolve));
    if (step.timeoutMs !== undefined) prepared.timeoutMs = step.timeoutMs;
  }
  return prepared;
}

/** A boolean parameter declared with flag: reads as its flag (or its false-flag, often nothing). */
function withFlags(definition: YamlToolDefinition, resolve: Resolve): Resolve {
  const flags = definition.flags;
  if (!flags) return resolve;
  return (ref) => {
    const flag = ref.path.length === 0 ? flags[ref.root] : undefined;
    return flag ? (resolve(ref) === true ? flag.on : flag.off) : resolve(ref);
  };
}

/** A run: word that is just an off flag leaves no empty argument. */
function isFlagWord(definition: YamlToolDefinition, word: Template): boolean {
  return word.segments.length === 1 && word.segments[0].kind === 'ref' && definition.flags?.[word.segments[0].ref.root] !== undefined && word.segments[0].ref.path.length === 0;
}

function prepareAction(definition: YamlToolDefinition, step: YamlStep, resolve: Resolve, context: PrepareContext): PreparedStep {
  const action = step.action;
  const authored = (ref: Reference) => ref.path.length === 0 && definition.flags?.[ref.root] !== undefined;
  if (action.kind === 'tool') {
    let args: unknown;
    if (action.args) args = Object.fromEntries(Object.entries(action.args).map(([k, v]) => [k, renderArg(v, resolve)]));
    else {
      args = renderValue(action.input, resolve);
      if (typeof args === 'string') {
        try {
          args = JSON.parse(args);
        } catch {
          // reported below
        }
      }
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      throw new ValueRefused(`the input of step "${step.name}" is not an object of arguments for "${action.tool}"`);
    }
    return { kind: 'tool', tool: action.tool, args: args as Record<string, unknown> };
  }

  const toolEnv = { ...renderEnvironment(definition.environment, resolve, context.baseEnv), ...renderEnvironment(step.environment, resolve, context.baseEnv) };
  const env = { ...context.baseEnv, ...toolEnv };
  const cwd = workingDirectory(step.workingDirectory ?? definition.workingDirectory, resolve, context);
  switch (action.kind) {
    case 'bash':
    case 'sh':
    case 'python': {
      const program = action.kind === 'python' ? context.python : action.kind;
      if (action.kind === 'python') Object.assign(env, PYTHON_TOOL_ENV);
      // Only a python: step's error is placed back in its script (run-step.ts): a shell step's lines are not worked out.
      const script = action.kind === 'python' ? { ...renderScriptLines(action.script, resolve), extension: '.py' } : { text: renderScript(action.script, resolve, authored), extension: '.sh' };
      return { kind: 'process', form: action.kind, argv: [program, SCRIPT_FILE], script, env, toolEnv, cwd };
    }
    case 'run':
      return { kind: 'process', form: 'run', argv: renderArgv(action.argv, resolve, authored).filter((arg, i) => arg !== '' || !isFlagWord(definition, action.argv[i])), env, toolEnv, cwd };
    case 'script': {
      const text = 'language' in action.body ? renderScript(action.body as CompiledScript, resolve, authored) : renderText(action.body as Template, resolve);
      let argv = renderArgv(action.interpreter, resolve, authored);
      if (argv.some((a) => a.includes('{0}'))) argv = argv.map((a) => a.split('{0}').join(SCRIPT_FILE));
      else argv.push(SCRIPT_FILE);
      if (action.extension === '.py') Object.assign(env, PYTHON_TOOL_ENV);
      return { kind: 'process', form: 'script', argv, script: { text, extension: action.extension }, env, toolEnv, cwd };
    }
  }
}


function renderArg(arg: ArgTemplate, resolve: Resolve): unknown {
  if ('literal' in arg) return arg.literal;
  if ('array' in arg) return arg.array.map((a) => renderArg(a, resolve));
  if ('object' in arg) return Object.fromEntries(Object.entries(arg.object).map(([k, v]) => [k, renderArg(v, resolve)]));
  return renderValue(arg, resolve);
}

function renderEnvironment(entries: readonly EnvironmentEntry[], resolve: Resolve, parent: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, value } of entries) {
    const text = renderText(value, resolve, parent);
    refuseUnholdable(text, `the value of environment variable ${name}`, 'the environment');
    out[name] = text;
  }
  return out;
}

/** The step's working directory: inside the work dir, and existing. */
function workingDirectory(template: Template | undefined, resolve: Resolve, context: PrepareContext): string {
  if (!template) return context.workDir;
  const rendered = renderText(template, resolve, context.baseEnv);
  refuseUnholdable(rendered, 'working-directory', 'a path');
  const target = resolvePath(context.workDir, rendered);
  if (!isWithin(context.workDir, target)) throw new ValueRefused(`working-directory "${rendered}" is outside the work dir`);
  if (!statSync(target, { throwIfNoEntry: false })?.isDirectory()) throw new ValueRefused(`working-directory "${rendered}" does not exist`);
  if (!isWithin(realpathSync(context.workDir), realpathSync(target))) throw new ValueRefused(`working-directory "${rendered}" leads outside the work dir through a symbolic link`);
  return target;
}
