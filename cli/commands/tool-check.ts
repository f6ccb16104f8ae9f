import { hasErrors } from '../../runtime/diagnostics.ts';
import { unknownToolHint } from '../../runtime/tools/unknown-tool.ts';
import type { ProjectTool } from '../../stages/project-tool.ts';
import { referencesOf, type Reference } from '../../stages/resolve-tool-dependencies.ts';
import { parseCommand } from '../args.ts';
import { diagnosticJson, failureJson, jsonDocument } from '../../runtime/failure-json.ts';
import { reportFailure } from '../command-failure.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { loadProjectForCli } from '../project-loader.ts';
import { errorsByToolName } from '../tool-file-errors.ts';
import { color as c, errColor } from '../terminal.ts';

export const usage = `usage: forge tool check [NAME] [--json]

Checks what tools need: every tool a tool calls and every dependency a YAML
tool declares (summarize@^1.0.0, user/fetch) is found — in the project, the
user scope or the global scope — at a version that satisfies it, with no
cycle of calls and no nesting deeper than 10. Each problem names the chain
of tools that needs it and where a tool of that name can be found. Without
NAME, checks every tool. The build runs the same checks.

examples:
  forge tool check
  forge tool check release_notes
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, {}, 1);
  const name = positionals[0];
  const loaded = await loadProjectForCli(values.config, { strict: false, json: true });
  const project = loaded.project;
  if (!project) {
    // `diagnostics` stays beside the shared keys: tool check's JSON has always listed them there.
    if (values.json) process.stdout.write(jsonDocument(failureJson(loaded.diagnostics, { diagnostics: loaded.diagnostics.map(diagnosticJson) })));
    else printDiagnostics(loaded.diagnostics);
    return 1;
  }

  let checked: ProjectTool[] = project.tools;
  let diagnostics = loaded.diagnostics;
  if (name) {
    const root = project.tools.find((t) => t.spec.name === name);
    // A file that declares NAME but does not load: its errors say why, not "no tool named".
    const own = root ? [] : (errorsByToolName(project, diagnostics).get(name) ?? []);
    if (own.length) {
      if (values.json) process.stdout.write(jsonDocument(failureJson(own, { diagnostics: own.map(diagnosticJson) })));
      else {
        printDiagnostics(own);
        process.stderr.write(`${errColor.red('✘')} tool "${name}" cannot be checked: its file has errors (above)\n`);
      }
      return 1;
    }
    if (!root) return reportFailure(values.json, 'FORGE_TOOL_UNKNOWN', `no tool named "${name}"`, unknownToolHint(name, project.tools.map((t) => t.spec.name)));
    checked = closure(root, project.tools);
    // A problem with what NAME needs is reported in one of the files of its closure.
    const files = new Set(checked.map((t) => t.file?.display).filter(Boolean));
    diagnostics = diagnostics.filter((d) => d.file !== undefined && files.has(d.file));
  }
  const ok = !hasErrors(diagnostics);
  if (values.json) {
    const tree = checked.filter((t) => references(t).length).map((t) => ({ tool: t.spec.name, needs: references(t).map((r) => describe(r, project.tools)) }));
    const fields = { tools: tree, diagnostics: diagnostics.map(diagnosticJson) };
    process.stdout.write(jsonDocument(ok ? { ok, ...fields } : failureJson(diagnostics, fields)));
    return ok ? 0 : 1;
  }
  printDiagnostics(diagnostics);
  for (const tool of checked) {
    const refs = references(tool);
    if (!refs.length) continue;
    const version = tool.yaml?.definition.version;
    process.stdout.write(`${c.bold(tool.spec.name)}${version ? ` ${version}` : ''}  ${c.dim(tool.file?.display ?? tool.origin)}\n`);
    refs.forEach((ref, i) => {
      const d = describe(ref, project.tools);
      const branch = i === refs.length - 1 ? '└─' : '├─';
      const found = d.found ? `${c.green('→')} ${d.found.version ?? '(no version)'}  ${c.dim(d.found.where)}` : c.red('✘ not resolved');
      process.stdout.write(`  ${branch} ${ref.text}  ${found}\n`);
    });
  }
  const what = name ? `what ${name} needs` : 'every tool\'s needs';
  if (ok) process.stdout.write(`${c.green('✓')} ${what}: found, satisfied, no cycles\n`);
  else process.stderr.write(`${errColor.red('✘')} ${what}: ${diagnostics.filter((d) => d.severity === 'error').length} problem(s)\n`);
  return ok ? 0 : 1;
}

/** Each tool a tool needs, once: as its declared dependency says it (scope, range) when it has one. */
function references(tool: ProjectTool): Reference[] {
  const refs = referencesOf(tool);
  return refs.filter((ref, i) => refs.findIndex((r) => r.name === ref.name) === i);
}

function describe(ref: Reference, tools: readonly ProjectTool[]): { ref: string; found?: { version?: string; where: string; scope: string } } {
  const tool = tools.find((t) => t.spec.name === ref.name && (ref.scope === undefined || (ref.scope === 'local' ? !t.scope : t.scope === ref.scope)));
  if (!tool) return { ref: ref.text };
  const scope = tool.scope ?? 'local';
  const where = tool.file ? `${tool.file.display}${tool.scope ? ` (${tool.scope} scope)` : ''}` : 'shipped with Forge';
  return { ref: ref.text, found: { scope, where, ...(tool.yaml?.definition.version ? { version: tool.yaml.definition.version } : {}) } };
}

/** The tool and everything it reaches through composedOf and declared dependencies. */
function closure(root: ProjectTool, tools: readonly ProjectTool[]): ProjectTool[] {
  const out: ProjectTool[] = [];
  const visit = (tool: ProjectTool) => {
    if (out.includes(tool)) return;
    out.push(tool);
    for (const ref of references(tool)) {
      const next = tools.find((t) => t.spec.name === ref.name);
      if (next) visit(next);
    }
  };
  visit(root);
  return out;
}
