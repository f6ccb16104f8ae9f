/**
 * Stage: filter. A production build removes every dev tool, whatever
 * declared it (a docstring's `Category: dev`, or a dev tool shipped with
 * Forge), before anything is bundled or written. A tool that calls a dev
 * tool would break without it, so that is an error in a production build.
 */
import { error, type Diagnostic } from '../runtime/diagnostics.ts';
import type { ProjectTool } from './project-tool.ts';

export interface FilteredTools {
  tools: ProjectTool[];
  stripped: ProjectTool[];
  problems: Diagnostic[];
}

export function filterTools(tools: readonly ProjectTool[], options: { prod: boolean }): FilteredTools {
  if (!options.prod) return { tools: [...tools], stripped: [], problems: [] };
  const kept = tools.filter((t) => t.spec.category !== 'dev');
  const stripped = tools.filter((t) => t.spec.category === 'dev');
  const devNames = new Set(stripped.map((t) => t.spec.name));
  const problems = kept.flatMap((t) =>
    (t.spec.composedOf ?? [])
      .filter((name) => devNames.has(name))
      .map((name) => error('FORGE_TOOL_DEV_DEPENDENCY', `tool "${t.spec.name}" calls the dev tool "${name}", which a --prod build leaves out`, t.at, `make "${name}" a custom tool, or "${t.spec.name}" a dev tool`)),
  );
  return { tools: kept, stripped, problems };
}
