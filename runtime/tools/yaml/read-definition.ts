/**
 * A YAML tool file's data → a YamlToolDefinition, with every problem at a
 * path into the data. The build reports them at file:line:column; the
 * runtime refuses a tool that has any.
 *
 * The build validates the file against schemas/tool.schema.json first (for
 * its messages); this reader still checks what it relies on, so a bundle
 * edited by hand fails clearly instead of crashing.
 */
import { parseDuration } from '../../duration.ts';
import { misspeltSecurityTag, misspeltSecurityTagText } from '../../guard/security-tags.ts';
import { didYouMean } from '../../suggest.ts';
import { checkToolName } from '../names.ts';
import { conditionReferences } from './condition.ts';
import { isWellFormedReference, PLATFORMS, parseToolReference, type Platform, type ToolDependency, type YamlStep, type YamlToolDefinition } from './definition.ts';
import { translateForeignTool } from './foreign-grammar.ts';
import { readParameters } from './parameters.ts';
import { isRecord, ProblemList } from './problems.ts';
import { collectTemplates, readBoolean, readEnvironment, readStep, STEP_KINDS, type TemplateUse } from './read-step.ts';
import { jsonPlaces, references } from './template.ts';

const TOOL_FIELDS = [
  'name', 'description', 'version', 'category', 'tags', 'platforms', 'timeout', 'working-directory', 'environment', 'parameters',
  'dependencies', 'parallel', 'output', 'single-confirmation', 'atomic', 'steps', 'shell', 'input', ...STEP_KINDS,
];
const STEP_RESULT_FIELDS = ['output', 'stdout', 'stderr', 'exit-code'];

/** Whether a YAML file declares a tool (rather than being data that travels with the tools). */
export function declaresTool(data: unknown): boolean {
  return isRecord(data) && ['steps', ...STEP_KINDS].some((k) => k in data);
}

export function readYamlTool(raw: unknown, defaultName: string): { definition?: YamlToolDefinition; problems: ProblemList } {
  const problems = new ProblemList();
  // CmdForge's and cycod's fields are aliases of Forge's (foreign-grammar.ts).
  const translated = translateForeignTool(raw);
  if (!isRecord(translated)) {
    problems.error('FORGE_YAML_SHAPE', 'a YAML tool is a mapping of fields (name, description, parameters, bash/steps...)', []);
    return { problems };
  }
  let data: Record<string, unknown> = translated;
  for (const key of Object.keys(data)) {
    if (!TOOL_FIELDS.includes(key)) problems.error('FORGE_YAML_FIELD', `unknown field "${key}"`, [key], { at: 'key', hint: didYouMean(key, TOOL_FIELDS) ?? `fields: ${TOOL_FIELDS.join(', ')}` });
  }

  const name = data.name ?? defaultName;
  if (typeof name !== 'string' || checkToolName(name, 'custom')) {
    problems.error('FORGE_TOOL_NAME', typeof name === 'string' ? checkToolName(name, 'custom')! : '"name" must be text', ['name'], { hint: data.name === undefined ? 'the name comes from the file name; add name: to choose another' : undefined });
  }
  const description = typeof data.description === 'string' ? data.description.trim() : '';
  if (!description) problems.error('FORGE_YAML_DESCRIPTION', 'the tool has no description', data.description === undefined ? [] : ['description'], { hint: 'models choose tools by their description; add "description: what it does"' });

  const { schema: inputSchema, names: parameterNames, flags } = readParameters(data.parameters, ['parameters'], problems);
  if (Object.keys(flags).length) data = flagsInScripts(data, Object.keys(flags));
  const tags = readTags(data.tags, problems);
  const environmentUses: TemplateUse[] = [];
  const toolTemplate = collectTemplates(problems, environmentUses);

  // Steps: a `steps:` list, or one action at the top level.
  const steps: YamlStep[] = [];
  const stepUses = new Map<YamlStep, TemplateUse[]>();
  const topLevelAction = STEP_KINDS.filter((k) => data[k] !== undefined);
  if (data.steps !== undefined && topLevelAction.length) {
    problems.error('FORGE_YAML_STEP', `use steps: or a single ${topLevelAction[0]}:, not both`, [topLevelAction[0]], { at: 'key' });
  } else if (data.steps !== undefined) {
    if (!Array.isArray(data.steps) || data.steps.length === 0) problems.error('FORGE_YAML_STEP', '"steps" must be a list of steps', ['steps'], { hint: 'write each step as "- bash: ..." (or run:, python:, tool: ...) under steps:' });
    else {
      data.steps.forEach((raw, i) => {
        if (!isRecord(raw)) return problems.error('FORGE_YAML_STEP', 'each step is a mapping (name:, bash:, ...)', ['steps', i], { hint: 'write the step as "- bash: echo hi", not "- echo hi"' });
        const read = readStep(raw, ['steps', i], `step${i + 1}`, problems);
        if (read) {
          steps.push(read.step);
          stepUses.set(read.step, read.uses);
        }
      });
    }
  } else if (topLevelAction.length) {
    const single: Record<string, unknown> = {};
    for (const key of [...topLevelAction, 'shell', 'input']) if (data[key] !== undefined) single[key] = data[key];
    const read = readStep(single, [], 'main', problems);
    if (read) {
      steps.push(read.step);
      stepUses.set(read.step, read.uses);
    }
  } else {
    problems.error('FORGE_YAML_STEP', 'the tool has nothing to run', [], { hint: 'add bash:, sh:, python:, run:, script: or steps:' });
  }
  if (data.shell !== undefined && data.script === undefined) problems.error('FORGE_YAML_STEP', '"shell:" goes with "script:"', ['shell'], { at: 'key' });

  const definition: YamlToolDefinition = {
    name: typeof name === 'string' ? name : defaultName,
    description,
    category: readCategory(data.category, problems),
    tags,
    inputSchema,
    environment: readEnvironment(data.environment, ['environment'], problems, toolTemplate),
    steps,
    parallel: readBoolean(data.parallel, ['parallel'], problems),
    dependencies: readDependencies(data.dependencies, problems),
    singleConfirmation: readBoolean(data['single-confirmation'], ['single-confirmation'], problems) || readBoolean(data.atomic, ['atomic'], problems),
    toolSteps: steps.flatMap((s) => (s.action.kind === 'tool' ? [{ name: s.action.tool, ...(s.action.scope ? { scope: s.action.scope } : {}), path: [...s.path, 'tool'] }] : [])),
  };
  if (Object.keys(flags).length) definition.flags = flags;
  if (typeof data.version === 'string' || typeof data.version === 'number') definition.version = String(data.version);
  else if (data.version !== undefined) problems.error('FORGE_YAML_TYPE', '"version" must be a version such as 1.0.0', ['version']);
  const platforms = readPlatforms(data.platforms, problems);
  if (platforms) definition.platforms = platforms;
  const timeoutMs = readTimeout(data.timeout, problems);
  if (timeoutMs !== undefined) definition.timeoutMs = timeoutMs;
  if (data['working-directory'] !== undefined) {
    if (typeof data['working-directory'] === 'string') definition.workingDirectory = toolTemplate(data['working-directory'], ['working-directory'], true);
    else problems.error('FORGE_YAML_TYPE', '"working-directory" must be a path', ['working-directory']);
  }
  let outputUse: TemplateUse | undefined;
  if (data.output !== undefined) {
    if (typeof data.output !== 'string') problems.error('FORGE_YAML_TYPE', '"output" must be a template such as "{summary}"', ['output']);
    else {
      definition.output = problems.template(data.output, ['output']);
      const places = jsonPlaces(definition.output);
      if (places) definition.outputJson = places;
      outputUse = { template: definition.output, path: ['output'] };
    }
  }

  checkReferences(definition, parameterNames, environmentUses, stepUses, outputUse, problems);
  return { definition: problems.failed ? undefined : definition, problems };
}

/**
 * Every placeholder must name a parameter, `input`, an earlier step (with
 * .output .stdout .stderr or .exit-code) or an earlier step's output_var.
 * Records which steps each step needs, for parallel runs.
 */
function checkReferences(
  definition: YamlToolDefinition,
  parameters: string[],
  environmentUses: TemplateUse[],
  stepUses: Map<YamlStep, TemplateUse[]>,
  outputUse: TemplateUse | undefined,
  problems: ProblemList,
) {
  const stepNames = new Map<string, number>();
  const outputVars = new Map<string, number>();
  definition.steps.forEach((step, index) => {
    if (stepNames.has(step.name)) problems.error('FORGE_YAML_STEP_NAME', `two steps are named "${step.name}"`, [...step.path, 'name'], { hint: 'step names are how {step.output} refers to a step: give each its own' });
    if (parameters.includes(step.name)) problems.error('FORGE_YAML_STEP_NAME', `step "${step.name}" has the name of a parameter`, [...step.path, 'name'], { hint: 'rename the step' });
    stepNames.set(step.name, index);
    if (step.outputVar) {
      if (outputVars.has(step.outputVar) || stepNames.has(step.outputVar) || parameters.includes(step.outputVar) || step.outputVar === 'input') {
        problems.error('FORGE_YAML_STEP_NAME', `output_var "${step.outputVar}" is already the name of a parameter, step or output_var`, [...step.path, 'output_var'], { hint: 'choose a name no parameter, step or other output_var uses' });
      }
      outputVars.set(step.outputVar, index);
    }
  });

  /** Checks one template used at step `index` (Infinity: after every step, -1: before any). */
  const check = (use: TemplateUse, index: number, onStep?: (needed: string) => void) => {
    for (const segment of references(use.template)) {
      const { root, path } = segment.ref;
      const at = { offset: segment.offset };
      if (segment.raw && !definition.flags?.[root]) {
        problems.warning('FORGE_YAML_RAW', `{${segment.ref.text}} inserts its value unescaped: a value can change the command`, use.path, { ...at, hint: 'use {NAME} unless the value must be read as code; RAW is for values you control' });
      }
      if (root === 'input' || parameters.includes(root)) continue;
      const stepIndex = stepNames.get(root) ?? outputVars.get(root);
      if (stepIndex === undefined) {
        const known = [...parameters, 'input', ...(index >= 0 ? [...stepNames.keys(), ...outputVars.keys()] : [])];
        problems.error('FORGE_YAML_REFERENCE', `{${segment.ref.text}} names no parameter${index >= 0 ? ', step or output_var' : ''}`, use.path, {
          ...at,
          hint: didYouMean(root, known) ?? `declare it under parameters: (forge tool add: --parameter ${root} "…"), or write {{ and }} for literal braces`,
        });
        continue;
      }
      if (index < 0) {
        problems.error('FORGE_YAML_REFERENCE', `{${segment.ref.text}} refers to a step, but this is set before any step runs`, use.path, at);
        continue;
      }
      const step = definition.steps[stepIndex];
      if (stepIndex >= index) {
        problems.error('FORGE_YAML_REFERENCE', stepIndex === index ? `step "${step.name}" refers to its own result` : `{${segment.ref.text}} refers to step "${step.name}", which runs later`, use.path, at);
        continue;
      }
      if (stepNames.has(root) && path.length > 0 && !STEP_RESULT_FIELDS.includes(path[0])) {
        problems.error('FORGE_YAML_REFERENCE', `{${segment.ref.text}}: a step's result has ${STEP_RESULT_FIELDS.map((f) => `.${f}`).join(', ')}`, use.path, { ...at, hint: didYouMean(path[0], STEP_RESULT_FIELDS) });
        continue;
      }
      if (stepNames.has(root) && path.length > 1 && path[0] !== 'output') {
        problems.error('FORGE_YAML_REFERENCE', `{${segment.ref.text}}: only .output has fields`, use.path, at);
        continue;
      }
      onStep?.(step.name);
    }
  };

  for (const use of environmentUses) check(use, -1);
  definition.steps.forEach((step, index) => {
    const needs = new Set<string>();
    for (const use of stepUses.get(step) ?? []) check(use, index, (n) => needs.add(n));
    if (step.when) {
      for (const ref of conditionReferences(step.when)) {
        const idx = stepNames.get(ref.root) ?? outputVars.get(ref.root);
        if (idx !== undefined && idx < index) needs.add(definition.steps[idx].name);
      }
    }
    step.needs = [...needs];
  });
  if (outputUse) check(outputUse, Infinity);
}

/**
 * A flag's value is one of two words the author wrote (checked to be plain
 * words), so in a shell script it goes in unquoted — `{RAW:NAME}` — and an
 * off flag that is empty leaves no empty argument behind.
 */
function flagsInScripts(data: Record<string, unknown>, names: string[]): Record<string, unknown> {
  const pattern = new RegExp(`\\{(${names.map((n) => n.replace(/[-]/g, '\\-')).join('|')})\\}`, 'g');
  const rewrite = (step: Record<string, unknown>) => {
    const out = { ...step };
    for (const key of ['bash', 'sh']) if (typeof out[key] === 'string') out[key] = (out[key] as string).replace(pattern, '{RAW:$1}');
    return out;
  };
  const out = rewrite(data);
  if (Array.isArray(out.steps)) out.steps = out.steps.map((s) => (isRecord(s) ? rewrite(s) : s));
  return out;
}

function readCategory(value: unknown, problems: ProblemList): 'custom' | 'dev' {
  if (value === undefined || value === 'custom' || value === 'dev') return (value as 'custom' | 'dev' | undefined) ?? 'custom';
  problems.error('FORGE_YAML_CATEGORY', `unknown category ${JSON.stringify(value)}`, ['category'], { hint: 'use "custom" (the default) or "dev" for a development-only tool' });
  return 'custom';
}

function readTags(value: unknown, problems: ProblemList): string[] {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? value.split(/[,\s]+/).filter(Boolean) : value;
  if (!Array.isArray(list)) {
    problems.error('FORGE_YAML_TYPE', '"tags" must be a list such as [read, network]', ['tags']);
    return [];
  }
  const tags: string[] = [];
  list.forEach((raw, i) => {
    const tag = String(raw).trim().toLowerCase();
    if (!/^[a-z0-9][a-z0-9_.:-]*$/.test(tag)) problems.error('FORGE_YAML_TAG', `tag "${raw}" may only contain letters, digits, "_", "-", "." and ":"`, Array.isArray(value) ? ['tags', i] : ['tags']);
    else if (!tags.includes(tag)) tags.push(tag);
  });
  const misspelt = misspeltSecurityTag(tags);
  if (misspelt) {
    const { message, hint } = misspeltSecurityTagText(misspelt);
    const i = Array.isArray(value) ? value.findIndex((raw) => String(raw).trim().toLowerCase() === misspelt.tag) : -1;
    problems.warning('FORGE_TAG_TYPO', message, i >= 0 ? ['tags', i] : ['tags'], { hint });
  }
  return tags;
}

function readPlatforms(value: unknown, problems: ProblemList): Platform[] | undefined {
  if (value === undefined) return undefined;
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0) {
    problems.error('FORGE_YAML_TYPE', '"platforms" must be a list such as [linux, macos]', ['platforms']);
    return undefined;
  }
  const out: Platform[] = [];
  list.forEach((p, i) => {
    if (PLATFORMS.includes(p as Platform)) out.push(p as Platform);
    else problems.error('FORGE_YAML_PLATFORM', `unknown platform ${JSON.stringify(p)}`, Array.isArray(value) ? ['platforms', i] : ['platforms'], { hint: didYouMean(String(p), PLATFORMS) ?? `platforms: ${PLATFORMS.join(', ')}` });
  });
  return out;
}

function readTimeout(value: unknown, problems: ProblemList): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms !== undefined && ms > 0) return ms;
  problems.error('FORGE_YAML_TIMEOUT', `invalid timeout ${JSON.stringify(value)}`, ['timeout'], { hint: 'milliseconds (5000) or a duration such as 10s or 2m' });
  return undefined;
}

function readDependencies(value: unknown, problems: ProblemList): ToolDependency[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.error('FORGE_YAML_TYPE', '"dependencies" must be a list such as [summarize@^1.0.0, fetch]', ['dependencies']);
    return [];
  }
  const out: ToolDependency[] = [];
  value.forEach((raw, i) => {
    const text = String(raw).trim();
    const reference = parseToolReference(text);
    const { scope, name, range } = reference;
    if (!isWellFormedReference(reference) || range === '') {
      problems.error('FORGE_YAML_DEPENDENCY', `"${text}" is not a dependency`, ['dependencies', i], { hint: 'write a tool name with an optional scope and semver range: summarize, user/summarize, summarize@^1.0.0' });
      return;
    }
    out.push({ name, text, path: ['dependencies', i], ...(scope ? { scope } : {}), ...(range ? { range } : {}) });
  });
  return out;
}

