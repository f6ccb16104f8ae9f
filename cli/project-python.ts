/**
 * `forge run` and `forge tool run`: the project's declared Python packages in
 * .forge/python-venv, which every Python process the tools start then uses
 * (through FORGE_PYTHON). Prints the diagnostic and returns false when they
 * cannot be installed: the tool would fail at import.
 */
import { DiagnosticError, type Diagnostic } from '../runtime/diagnostics.ts';
import type { PythonDependencies } from '../runtime/manifest.ts';
import type { SourceFile } from '../stages/discover-tools.ts';
import type { ProjectTool } from '../stages/project-tool.ts';
import { collectPythonDependencies } from '../stages/python/python-dependencies.ts';
import { ensureProjectVenv } from '../stages/python/project-venv.ts';
import { writeFailureJson } from '../runtime/failure-json.ts';
import { printDiagnostics } from './diagnostics-output.ts';
import { errColor as c } from './terminal.ts';

/** `warnings`: what the command warned of before (--json), kept in the failure's document. */
export async function prepareProjectPython(root: string, tools: readonly ProjectTool[], options: { json?: boolean; warnings?: readonly Diagnostic[] } = {}): Promise<boolean> {
  const problems = await installProjectPython(root, tools, options.json ? undefined : (line) => process.stderr.write(c.dim(`${line}\n`)));
  if (!problems.length) return true;
  // With --json the problems are the command's one JSON document (the pip lines were left out above).
  if (options.json) writeFailureJson(true, [...problems, ...(options.warnings ?? [])]);
  else printDiagnostics(problems);
  return false;
}

/** The packages the tools declare (PEP 723 blocks, requirements.txt); none when they declare none. */
export function declaredPythonPackages(root: string, tools: readonly ProjectTool[]): PythonDependencies | undefined {
  return collectPythonDependencies(root, pythonToolFiles(tools)).dependencies;
}

/** The project's own Python tool files (not those of the user or global scope). */
function pythonToolFiles(tools: readonly ProjectTool[]): SourceFile[] {
  return tools.flatMap((t) => (t.file?.kind === 'python' && !t.scope ? [t.file] : []));
}

/** Installs the declared packages (nothing when the environment already has them); the diagnostics say why not. */
export async function installProjectPython(root: string, tools: readonly ProjectTool[], log?: (line: string) => void): Promise<Diagnostic[]> {
  const facts = collectPythonDependencies(root, pythonToolFiles(tools));
  // A dependency pip would not read as written was left out of the list: the tool declaring it would run without it.
  const refused = facts.diagnostics.filter((d) => d.code === 'FORGE_PY_DEPENDENCY');
  if (refused.length) return refused;
  const dependencies = facts.dependencies;
  if (!dependencies) return [];
  try {
    process.env.FORGE_PYTHON = await ensureProjectVenv(root, dependencies, { log });
    return [];
  } catch (err) {
    if (!(err instanceof DiagnosticError)) throw err;
    return err.diagnostics;
  }
}
