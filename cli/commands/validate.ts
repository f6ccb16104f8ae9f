import { hasErrors } from '../../runtime/diagnostics.ts';
import { parseCommand } from '../args.ts';
import { diagnosticsJson, failureJson, jsonDocument } from '../../runtime/failure-json.ts';
import { loadProjectForCli } from '../project-loader.ts';
import { color as c } from '../terminal.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { checkProjectFiles } from '../source-check.ts';
import { checkSecretFiles } from '../../stages/check-secret-files.ts';
import { checkApprovalRules } from '../../stages/check-approval-rules.ts';

export const usage = `usage: forge validate [--config FILE] [--json]

Checks forge.yaml against its schema and parses every tool's docstring,
without building; compiles the Python tools with the interpreter they run
with (and checks their imports against the declared packages) and parses the
TypeScript/JavaScript tools with esbuild, and warns of files the bundle
would ship that look like secrets and of approval rules that match no tool.
Exits 1 if anything is wrong; each problem is printed with its
file:line:column and a hint.
`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommand(argv, {});
  const { project, diagnostics } = await loadProjectForCli(values.config, { strict: true, json: values.json });
  if (project && !hasErrors(diagnostics)) {
    // Syntax of every tool source, and Python imports against the declared packages.
    const sources = await checkProjectFiles(project);
    // Files the bundle would ship that look like secrets: a warning here, as in a dev build (--prod refuses them).
    const toolFiles = project.tools.flatMap((t) => (t.file ? [t.file] : []));
    sources.push(...checkSecretFiles([...toolFiles, ...project.supportFiles], new Set(toolFiles), false, project.config.notSecrets));
    // Approval rules that match no tool (a misspelt auto_deny lets its tool run), as the build reports them.
    sources.push(...checkApprovalRules(project.config, project.tools));
    if (!values.json) printDiagnostics(sources);
    diagnostics.push(...sources);
  }
  const ok = project !== undefined && !hasErrors(diagnostics);
  if (values.json) {
    const tools = project?.tools.map((t) => t.spec.name) ?? [];
    process.stdout.write(jsonDocument(ok ? { ok, tools, ...diagnosticsJson(diagnostics) } : failureJson(diagnostics, { tools })));
  } else if (ok) {
    const n = project!.tools.length;
    process.stdout.write(`${c.green('✓')} ${project!.config.displayFile} and ${n} tool${n === 1 ? '' : 's'} are valid\n`);
  }
  return ok ? 0 : 1;
}
