/**
 * Tools written for CmdForge or cycod, pasted into tools/, read as Forge
 * YAML tools: their fields are aliases, rewritten here onto Forge's own
 * before anything else reads the file (the schema check, the reader), so a
 * pasted tool behaves exactly as the Forge tool it maps to. A file with none
 * of these fields is returned as it is.
 *
 * CmdForge:
 *   arguments: [{flag: --max-words, variable: max_words, default, description}]
 *                                → parameters: { max_words: {...} }
 *   steps: [{type: tool, tool, input, output_var}]
 *                                → a tool step (type: dropped)
 *   {input} (the text piped in)  → {stdin}, a string parameter
 *   input: "text {x}" on a tool step → args: { stdin: "text {x}" }
 *   category: Text Tools         → tags: [text-tools] (category stays custom)
 * cycod:
 *   run: prog + arguments: [a, b] → run: [prog, a, b]   (a mapping: --key value)
 *   cmd: / pwsh:                 → script: with shell: cmd /d /c {0} / pwsh -NoProfile -File {0},
 *                                  platforms: [windows] unless the tool says otherwise
 *   input: on a process step     → its stdin (Forge's own field)
 *   timeout: on a step           → that step's time limit (Forge's own field)
 *   boolean parameter flag: -w   → Forge's own field: {NAME} renders the flag, or nothing
 */
import { isRecord } from './problems.ts';

/** What stands for the piped text of a CmdForge tool. */
export const CMDFORGE_STDIN = 'stdin';

const CMDFORGE_STEP_TYPES = new Set(['tool', 'prompt', 'code']);

export function translateForeignTool(data: unknown): unknown {
  if (!isRecord(data)) return data;
  let out: Record<string, unknown> = { ...data };
  const cmdforge = isCmdForge(data);

  if (typeof out.category === 'string' && !['custom', 'dev'].includes(out.category)) {
    // A free category is a label: it becomes a tag, as a person would search for it.
    const tag = out.category.trim().toLowerCase().replace(/[^a-z0-9_.:-]+/g, '-').replace(/^-+|-+$/g, '');
    const tags = Array.isArray(out.tags) ? out.tags : typeof out.tags === 'string' ? out.tags.split(/[,\s]+/).filter(Boolean) : [];
    out.tags = tag && !tags.includes(tag) ? [...tags, tag] : tags;
    delete out.category;
  }

  if (cmdforge) {
    const parameters: Record<string, unknown> = isRecord(out.parameters) ? { ...out.parameters } : {};
    if (Array.isArray(out.arguments)) {
      for (const arg of out.arguments) {
        if (!isRecord(arg)) continue;
        const name = String(arg.variable ?? String(arg.flag ?? '').replace(/^-+/, '').replace(/-/g, '_'));
        const { flag: _flag, variable: _variable, ...rest } = arg;
        parameters[name] = { type: 'string', ...rest, ...(rest.default !== undefined ? { default: typeof rest.default === 'number' || typeof rest.default === 'boolean' ? rest.default : String(rest.default) } : {}) };
      }
      delete out.arguments;
    }
    if (usesPipedText(data)) parameters[CMDFORGE_STDIN] = { type: 'string', description: 'The text the tool works on (what CmdForge pipes in as {input}).', default: '' };
    if (Object.keys(parameters).length) out.parameters = parameters;
    if (Array.isArray(out.steps)) {
      // A code step sees the arguments and the earlier steps' output_vars as Python variables.
      const known = Object.keys(parameters).map((p) => ({ python: p === CMDFORGE_STDIN ? 'input' : p, ref: p }));
      out.steps = out.steps.map((s) => {
        if (!isRecord(s)) return s;
        const step = s.type === 'code' ? codeStep(s, known) : cmdForgeStep(s);
        if (typeof s.output_var === 'string' && /^[A-Za-z_]\w*$/.test(s.output_var)) known.push({ python: s.output_var, ref: s.output_var });
        return step;
      });
    }
    for (const key of ['output', 'bash', 'sh', 'python']) if (typeof out[key] === 'string') out[key] = pipedTextAsStdin(out[key] as string);
  } else {
    out = cycodStep(out);
    if (Array.isArray(out.steps)) out.steps = out.steps.map((s) => (isRecord(s) ? cycodStep(s) : s));
    if (out.platforms === undefined && usesWindowsShell(data)) out.platforms = ['windows'];
  }
  return out;
}

/** CmdForge's marks: steps with `type:`, or `arguments:` as a list of flag/variable definitions. */
function isCmdForge(data: Record<string, unknown>): boolean {
  const typedSteps = Array.isArray(data.steps) && data.steps.some((s) => isRecord(s) && typeof s.type === 'string' && CMDFORGE_STEP_TYPES.has(s.type));
  const argumentList = Array.isArray(data.arguments) && data.arguments.some((a) => isRecord(a) && ('variable' in a || 'flag' in a));
  return typedSteps || argumentList;
}

/** The piped text is {input} in a template, and the variable `input` in every code step. */
function usesPipedText(data: Record<string, unknown>): boolean {
  const codeSteps = Array.isArray(data.steps) && data.steps.some((s) => isRecord(s) && s.type === 'code');
  return codeSteps || /\{input\}/.test(JSON.stringify(data));
}

function pipedTextAsStdin(template: string): string {
  return template.replace(/\{input\}/g, `{${CMDFORGE_STDIN}}`);
}

function cmdForgeStep(step: Record<string, unknown>): Record<string, unknown> {
  const { type, ...rest } = step;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) out[key] = typeof value === 'string' ? pipedTextAsStdin(value) : value;
  if (type === 'tool') {
    // CmdForge hands the called tool text; a Forge tool takes arguments: the text is its stdin.
    if (typeof out.input === 'string' && !out.input.trim().startsWith('{' + '"')) {
      out.args = { ...(isRecord(out.args) ? out.args : {}), [CMDFORGE_STDIN]: out.input };
      delete out.input;
    }
    if (isRecord(out.arguments)) {
      out.args = { ...(isRecord(out.args) ? out.args : {}), ...out.arguments };
      delete out.arguments;
    }
  } else if (type !== undefined) {
    // prompt / code steps have no Forge equivalent: the reader reports the leftover field at its place.
    out.type = type;
  }
  return out;
}

/**
 * A CmdForge code step: Python that reads the arguments and earlier results
 * as variables and leaves its result in the variable its output_var names.
 * As a Forge python: step, each variable is set from a placeholder (a
 * Python literal, escaped by Forge), and the result is printed.
 */
function codeStep(step: Record<string, unknown>, known: { python: string; ref: string }[]): Record<string, unknown> {
  const { type: _type, code, output_var: outputVar, ...rest } = step;
  if (typeof code !== 'string') return { ...rest, python: code };
  const prelude = known.map(({ python, ref }) => `${python} = {${ref}}`).join('\n');
  const result = typeof outputVar === 'string' ? outputVar : undefined;
  const epilogue = result ? `\nimport json as _forge_json, sys as _forge_sys\n_forge_sys.stdout.write(${result} if isinstance(${result}, str) else _forge_json.dumps(${result}))\n` : '';
  return { ...rest, ...(result ? { output_var: result } : {}), python: `${prelude}\n${code.replace(/\{/g, '{{').replace(/\}/g, '}}')}${epilogue}` };
}

/** cycod's `arguments:` (appended to `run:`), `cmd:` and `pwsh:`, on a step or at the tool's top level. */
function cycodStep(step: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...step };
  if (step.run !== undefined && step.arguments !== undefined) {
    const extra = Array.isArray(step.arguments)
      ? step.arguments.map(String)
      : isRecord(step.arguments)
        ? Object.entries(step.arguments).flatMap(([k, v]) => [k.startsWith('-') ? k : `--${k}`, String(v)])
        : undefined;
    const base = Array.isArray(step.run) ? step.run.map(String) : typeof step.run === 'string' ? splitWords(step.run) : undefined;
    if (base && extra) {
      out.run = [...base, ...extra];
      delete out.arguments;
    }
  }
  for (const [alias, shell] of [['cmd', 'cmd /d /c {0}'], ['pwsh', 'pwsh -NoProfile -NonInteractive -File {0}']] as const) {
    if (step[alias] === undefined) continue;
    out.script = step[alias];
    out.shell = shell;
    delete out[alias];
  }
  return out;
}

function usesWindowsShell(data: Record<string, unknown>): boolean {
  const steps = Array.isArray(data.steps) ? data.steps : [];
  return data.cmd !== undefined || data.pwsh !== undefined || steps.some((s) => isRecord(s) && (s.cmd !== undefined || s.pwsh !== undefined));
}

/** Words of a command line, honouring "double" and 'single' quotes (cycod's `run:` before its arguments). */
function splitWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | undefined;
  let started = false;
  for (const c of line) {
    if (quote) {
      if (c === quote) quote = undefined;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      started = true;
    } else if (/\s/.test(c)) {
      if (started) words.push(word);
      word = '';
      started = false;
    } else {
      word += c;
      started = true;
    }
  }
  if (started) words.push(word);
  return words;
}
