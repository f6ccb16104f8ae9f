/**
 * One step of a YAML tool: bash:, sh:, python:, run:, script: (with shell:)
 * or tool:, plus when:, continue-on-error:, cache:, output_var:,
 * environment: and working-directory:.
 */
import { parseDuration } from '../../duration.ts';
import { splitCommand } from './argv.ts';
import { parseCondition } from './condition.ts';
import { isWellFormedReference, parseToolReference, type ArgTemplate, type EnvironmentEntry, type PathSegment, type StepAction, type YamlStep } from './definition.ts';
import { isRecord, type ProblemList } from './problems.ts';
import { compileScript, type ScriptLanguage } from './script.ts';
import { literalSkeleton, references, type Template } from './template.ts';

export const STEP_KINDS = ['bash', 'sh', 'python', 'run', 'script', 'tool'] as const;
const STEP_FIELDS = new Set([...STEP_KINDS, 'name', 'when', 'continue-on-error', 'cache', 'output_var', 'environment', 'working-directory', 'shell', 'args', 'input', 'timeout']);

/** Every template a step holds, with where it is: references are checked once all steps are known. */
export interface TemplateUse {
  template: Template;
  path: PathSegment[];
}

export interface ReadStep {
  step: YamlStep;
  uses: TemplateUse[];
}

type MakeTemplate = (value: string, at: PathSegment[], env?: boolean) => Template;

/** Parses templates (problems to `problems`) and keeps each in `uses`, for the reference check once every step is known. */
export function collectTemplates(problems: ProblemList, uses: TemplateUse[]): MakeTemplate {
  return (value, at, env = false) => {
    const template = problems.template(value, at, { env });
    uses.push({ template, path: at });
    return template;
  };
}

export function readStep(raw: Record<string, unknown>, path: PathSegment[], defaultName: string, problems: ProblemList): ReadStep | undefined {
  const uses: TemplateUse[] = [];
  const template = collectTemplates(problems, uses);

  for (const key of Object.keys(raw)) {
    if (!STEP_FIELDS.has(key)) problems.error('FORGE_YAML_FIELD', `unknown step field "${key}"`, [...path, key], { at: 'key' });
  }
  const kinds = STEP_KINDS.filter((k) => raw[k] !== undefined);
  if (kinds.length !== 1) {
    problems.error('FORGE_YAML_STEP', kinds.length ? `a step has one action, this one has ${kinds.join(' and ')}` : 'the step does nothing', path, {
      hint: 'give each step one of: bash, sh, python, run, script, tool',
    });
    return undefined;
  }
  const kind = kinds[0];
  const actionPath = [...path, kind];
  let action: StepAction | undefined;
  const value = raw[kind];

  if (kind === 'bash' || kind === 'sh' || kind === 'python') {
    if (typeof value !== 'string') return typeError(problems, actionPath, 'a script (text)');
    const compiled = compileScript(template(value, actionPath), kind);
    problems.fromTemplate('FORGE_YAML_PLACEHOLDER', compiled.problems, actionPath);
    action = { kind, script: compiled.script };
  } else if (kind === 'run') {
    action = { kind: 'run', argv: readCommand(value, actionPath, problems, template) };
  } else if (kind === 'script') {
    if (typeof value !== 'string') return typeError(problems, actionPath, 'a script (text)');
    const shellPath = [...path, 'shell'];
    const shell = raw.shell === undefined ? 'bash {0}' : raw.shell;
    const interpreter = readCommand(shell, shellPath, problems, template);
    const language = interpreterLanguage(interpreter[0]);
    const body = template(value, actionPath);
    if (language) {
      const compiled = compileScript(body, language);
      problems.fromTemplate('FORGE_YAML_PLACEHOLDER', compiled.problems, actionPath);
      action = { kind: 'script', body: compiled.script, interpreter, extension: language === 'python' ? '.py' : '.sh' };
    } else {
      for (const segment of references(body)) {
        if (segment.raw) continue;
        problems.error('FORGE_YAML_PLACEHOLDER', `placeholder {${segment.ref.text}} in a script for "${literalSkeleton(interpreter[0] ?? body).text}", whose quoting Forge does not know`, actionPath, {
          offset: segment.offset,
          hint: 'pass the value through environment: (e.g. VALUE: "{NAME}") and read it from the environment in the script',
        });
      }
      action = { kind: 'script', body, interpreter, extension: '' };
    }
  } else {
    const ref = typeof value === 'string' ? parseToolReference(value) : undefined;
    if (!ref || ref.range !== undefined || !isWellFormedReference(ref)) {
      problems.error('FORGE_YAML_TOOL_REF', `"tool:" must name a tool, such as summarize or user/summarize`, actionPath);
      return undefined;
    }
    const { scope, name } = ref;
    let args: Record<string, ArgTemplate> | undefined;
    if (raw.args !== undefined) {
      if (!isRecord(raw.args)) return typeError(problems, [...path, 'args'], 'a mapping of argument names to values');
      // Entries, not assignments: an argument named __proto__ stays an argument (and is said to be one the tool does not take).
      args = Object.fromEntries(Object.entries(raw.args).map(([key, v]) => [key, readArg(v, [...path, 'args', key], template)]));
    }
    const input = raw.input === undefined ? template('{input}', [...path, 'tool']) : typeof raw.input === 'string' ? template(raw.input, [...path, 'input']) : undefined;
    if (!input) return typeError(problems, [...path, 'input'], 'a template such as "{input}"');
    if (raw.args !== undefined && raw.input !== undefined) problems.error('FORGE_YAML_STEP', 'a tool step takes args: or input:, not both', [...path, 'input'], { at: 'key' });
    action = { kind: 'tool', tool: name, ...(scope ? { scope } : {}), ...(args ? { args } : {}), input };
  }
  if (kind !== 'script' && raw.shell !== undefined) problems.error('FORGE_YAML_STEP', '"shell:" goes with "script:"', [...path, 'shell'], { at: 'key' });
  if (kind !== 'tool' && raw.args !== undefined) problems.error('FORGE_YAML_STEP', '"args:" goes with "tool:"', [...path, 'args'], { at: 'key' });
  // A process step's input: is what it reads on stdin.
  let stdin: Template | undefined;
  if (kind !== 'tool' && raw.input !== undefined) {
    if (typeof raw.input !== 'string') typeError(problems, [...path, 'input'], 'text for the step\'s stdin');
    else stdin = template(raw.input, [...path, 'input']);
  }

  const name = raw.name === undefined ? defaultName : raw.name;
  if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_-]*$/.test(name)) {
    problems.error('FORGE_YAML_STEP_NAME', `step name ${JSON.stringify(name)} must start with a letter and hold only letters, digits, "_" and "-"`, [...path, 'name']);
    return undefined;
  }
  const step: YamlStep = {
    name,
    action,
    continueOnError: readBoolean(raw['continue-on-error'], [...path, 'continue-on-error'], problems),
    cache: readBoolean(raw.cache, [...path, 'cache'], problems),
    environment: readEnvironment(raw.environment, [...path, 'environment'], problems, template),
    needs: [],
    path,
  };
  if (stdin) step.stdin = stdin;
  if (raw.timeout !== undefined) {
    const ms = readDuration(raw.timeout);
    if (ms === undefined) problems.error('FORGE_YAML_TIMEOUT', `invalid timeout ${JSON.stringify(raw.timeout)}`, [...path, 'timeout'], { hint: 'milliseconds (5000) or a duration such as 10s or 2m' });
    else step.timeoutMs = ms;
  }
  if (raw.output_var !== undefined) {
    if (typeof raw.output_var !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(raw.output_var)) {
      problems.error('FORGE_YAML_STEP_NAME', 'output_var must be a name of letters, digits and "_"', [...path, 'output_var']);
    } else step.outputVar = raw.output_var;
  }
  if (raw['working-directory'] !== undefined) {
    if (typeof raw['working-directory'] !== 'string') typeError(problems, [...path, 'working-directory'], 'a path');
    else step.workingDirectory = template(raw['working-directory'], [...path, 'working-directory'], true);
  }
  if (raw.when !== undefined) {
    const whenPath = [...path, 'when'];
    const source = typeof raw.when === 'boolean' ? String(raw.when) : raw.when;
    if (typeof source !== 'string') typeError(problems, whenPath, 'a condition such as "{mode} == \'fast\'"');
    else {
      const parsed = parseCondition(template(source, whenPath));
      problems.fromTemplate('FORGE_YAML_CONDITION', parsed.problems, whenPath);
      step.when = parsed.condition;
      step.whenSource = source;
    }
  }
  return { step, uses };
}

/** A command as a string (split into words) or a list (one argument each). */
function readCommand(value: unknown, path: PathSegment[], problems: ProblemList, template: MakeTemplate): Template[] {
  if (typeof value === 'string') {
    const { words, problems: found } = splitCommand(template(value, path));
    problems.fromTemplate('FORGE_YAML_COMMAND', found, path);
    return words;
  }
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string' || typeof v === 'number')) {
    return value.map((v, i) => template(String(v), [...path, i]));
  }
  problems.error('FORGE_YAML_COMMAND', 'a command is a string ("git log -n {count}") or a list of arguments', path);
  return [];
}

function readArg(value: unknown, path: PathSegment[], template: MakeTemplate): ArgTemplate {
  if (typeof value === 'string') return template(value, path);
  if (Array.isArray(value)) return { array: value.map((v, i) => readArg(v, [...path, i], template)) };
  if (isRecord(value)) return { object: Object.fromEntries(Object.entries(value).map(([k, v]) => [k, readArg(v, [...path, k], template)])) };
  return { literal: value };
}

export function readEnvironment(value: unknown, path: PathSegment[], problems: ProblemList, template: MakeTemplate): EnvironmentEntry[] {
  if (value === undefined) return [];
  if (!isRecord(value)) {
    typeError(problems, path, 'a mapping of variable names to values');
    return [];
  }
  const out: EnvironmentEntry[] = [];
  for (const [name, v] of Object.entries(value)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      problems.error('FORGE_YAML_ENV', `"${name}" is not an environment variable name`, [...path, name], { at: 'key' });
      continue;
    }
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      typeError(problems, [...path, name], 'text');
      continue;
    }
    out.push({ name, value: template(String(v), [...path, name], true) });
  }
  return out;
}

/** A step's timeout: milliseconds, or a duration such as 10s (as the tool's own timeout). */
function readDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value > 0 ? value : undefined;
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  return ms !== undefined && ms > 0 ? ms : undefined;
}

export function readBoolean(value: unknown, path: PathSegment[], problems: ProblemList): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') {
    typeError(problems, path, 'true or false');
    return false;
  }
  return value;
}

function typeError(problems: ProblemList, path: PathSegment[], expected: string): undefined {
  problems.error('FORGE_YAML_TYPE', `"${String(path[path.length - 1])}" must be ${expected}`, path);
  return undefined;
}

/** The script language of an interpreter command (`bash {0}`, `python3 -u {0}`), if Forge knows how to quote for it. */
function interpreterLanguage(first: Template | undefined): ScriptLanguage | undefined {
  if (!first || first.segments.some((s) => s.kind !== 'text')) return undefined;
  const program = literalSkeleton(first).text.split(/[\\/]/).pop() ?? '';
  if (/^(bash|zsh|ksh)$/.test(program)) return 'bash';
  if (/^(sh|dash|ash)$/.test(program)) return 'sh';
  if (/^python(\d+(\.\d+)?)?$/.test(program)) return 'python';
  return undefined;
}
