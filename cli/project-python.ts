/**
 * `forge run` and `forge tool run`: the project's declared Python packages in
 * .forge/python-venv, which every Python process the tools start then uses
 * (through FORGE_PYTHON). Prints the diagnostic and returns false when they
 * cannot be installed: the tool would fail at import.
 */
import { DiagnosticError } from '../runtime/diagnostics.ts';
import type { ProjectTool } from '../stages/project-tool.ts';
import { collectPythonDependencies } from '../stages/python/python-dependencies.ts';
import { ensureProjectVenv } from '../stages/python/project-venv.ts';
import { printDiagnostics } from './diagnostics-output.ts';
import { errColor as c } from './terminal.ts';

export async function prepareProjectPython(root: string, tools: readonly ProjectTool[], options: { quiet?: boolean } = {}): Promise<boolean> {
  const files = [...new Set(tools.filter((t) => t.file?.kind === 'python' && !t.scope).map((t) => t.file!.absolute))];
  const { dependencies } = collectPythonDependencies(root, files);
  if (!dependencies) return true;
  try {
    process.env.FORGE_PYTHON = await ensureProjectVenv(root, dependencies, { log: options.quiet ? undefined : (line) => process.stderr.write(c.dim(`${line}\n`)) });
    return true;
  } catch (err) {
    if (!(err instanceof DiagnosticError)) throw err;
    printDiagnostics(err.diagnostics);
    return false;
  }
}
