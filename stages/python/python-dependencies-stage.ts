/** Stage: the Python packages the selected tools declare (see python-dependencies.ts). */
import type { ProjectTool } from '../project-tool.ts';
import type { StageContext } from '../stage.ts';
import { collectPythonDependencies, type PythonDependencyFacts } from './python-dependencies.ts';

/** The file in the bundle that lists them for pip (the Dockerfile's venv installs it). */
export const PYTHON_REQUIREMENTS_FILE = 'python-requirements.txt';

export function pythonDependencies(root: string, tools: readonly ProjectTool[], ctx: StageContext): PythonDependencyFacts {
  const files = tools.flatMap((t) => (t.file?.kind === 'python' ? [t.file] : []));
  const facts = collectPythonDependencies(root, files, ctx.cwd);
  ctx.report(...facts.diagnostics);
  return facts;
}
