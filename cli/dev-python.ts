/**
 * Hot reload and the project's Python environment: the start installed the
 * packages the tools declared then; a save that changes the declarations
 * (a new tool with a `# /// script` block, an edited one; requirements.txt
 * is read again at every reload) installs again, as a restart would. An
 * unchanged declaration set costs one read of the Python tool files, so
 * ordinary saves stay fast and pip runs only when there is something new.
 *
 * When pip cannot install, nothing new is installed: the tools that declare
 * a package the environment lacks are kept unavailable (their calls answer
 * with FORGE_PYTHON_DEPS) instead of failing at import, until the
 * declarations change again.
 */
import { relative } from 'node:path';
import type { Diagnostic } from '../runtime/diagnostics.ts';
import type { ProjectTool } from '../stages/project-tool.ts';
import { requirementsText } from '../stages/python/python-dependencies.ts';
import { printDiagnostics } from './diagnostics-output.ts';
import { declaredPythonPackages, installProjectPython } from './project-python.ts';

export interface DevPythonState {
  /** The declarations last acted on (requirements text; empty for none). */
  declared: string;
  /** The packages the environment has (what the last successful install was given). */
  installed: Set<string>;
  /** Why the last install failed, while the declarations stay as they were then. */
  failure?: Diagnostic[];
}

/** What the start installed (it stops when it cannot, so whatever was declared is there). */
export function pythonAtStart(root: string, tools: readonly ProjectTool[]): DevPythonState {
  const deps = declaredPythonPackages(root, tools);
  return { declared: deps ? requirementsText(deps) : '', installed: new Set(deps?.dependencies ?? []) };
}

export interface PythonRefresh {
  /** Packages were installed: Python tools started before would not see them. */
  installed: boolean;
  /** Tools that declare a package the environment lacks, with the reason. */
  unavailable: Map<string, Diagnostic[]>;
}

export async function refreshProjectPython(state: DevPythonState, root: string, tools: readonly ProjectTool[], log: (line: string) => void): Promise<PythonRefresh> {
  const deps = declaredPythonPackages(root, tools);
  const declared = deps ? requirementsText(deps) : '';
  let installed = false;
  if (declared !== state.declared) {
    state.declared = declared;
    state.failure = undefined;
    if (deps) {
      const problems = await installProjectPython(root, tools, log);
      printDiagnostics(problems);
      if (problems.length) state.failure = problems;
      else {
        state.installed = new Set(deps.dependencies);
        installed = true;
      }
    }
  }
  const unavailable = new Map<string, Diagnostic[]>();
  if (!deps || !state.failure) return { installed, unavailable };
  const lacking = new Set(deps.dependencies.filter((d) => !state.installed.has(d)).flatMap((d) => deps.declared_in[d] ?? []));
  for (const tool of tools) {
    if (tool.file?.kind === 'python' && lacking.has(relative(root, tool.file.absolute).split('\\').join('/'))) unavailable.set(tool.spec.name, state.failure);
  }
  return { installed, unavailable };
}
