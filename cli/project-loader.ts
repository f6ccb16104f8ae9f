/** Loads the project for a CLI command and prints what the stages reported. */
import { loadProject, type Project } from '../stages/load-project.ts';
import { BuildStopped, StageContext } from '../stages/stage.ts';
import { diagnosticJson, printDiagnostics } from './diagnostics-output.ts';
import type { Diagnostic } from '../runtime/diagnostics.ts';

export interface LoadedProject {
  project?: Project;
  diagnostics: Diagnostic[];
}

/**
 * `strict` stops at the first stage with errors (validate); otherwise tools
 * with errors are left out and the rest stay usable (tool list/describe/run).
 */
export async function loadProjectForCli(configFile: string | undefined, options: { strict: boolean; json: boolean; extraRoots?: string[]; scopesOnly?: boolean }): Promise<LoadedProject> {
  const ctx = new StageContext(process.cwd(), options.strict);
  let project: Project | undefined;
  try {
    project = await loadProject({ configFile, extraRoots: options.extraRoots, scopesOnly: options.scopesOnly }, ctx);
  } catch (err) {
    if (!(err instanceof BuildStopped)) throw err;
  }
  if (!options.json) printDiagnostics(ctx.diagnostics);
  return { project, diagnostics: ctx.diagnostics };
}

export function diagnosticsJson(diagnostics: readonly Diagnostic[]) {
  return {
    errors: diagnostics.filter((d) => d.severity === 'error').map(diagnosticJson),
    warnings: diagnostics.filter((d) => d.severity === 'warning').map(diagnosticJson),
  };
}
