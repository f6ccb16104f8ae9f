/** `forge validate`'s source check: the check-sources stage over every project file. */
import type { Diagnostic } from '../runtime/diagnostics.ts';
import { checkProjectSources } from '../stages/check-sources.ts';
import type { Project } from '../stages/load-project.ts';
import { collectPythonDependencies } from '../stages/python/python-dependencies.ts';
import { StageContext } from '../stages/stage.ts';

export async function checkProjectFiles(project: Project): Promise<Diagnostic[]> {
  const ctx = new StageContext(process.cwd(), false);
  const files = project.files.filter((f) => !f.scope);
  const python = collectPythonDependencies(project.config.root, files.filter((f) => f.kind === 'python'), ctx.cwd);
  ctx.report(...python.diagnostics);
  await checkProjectSources(project, files, python.dependencies, ctx, { scripts: true });
  return ctx.diagnostics;
}
