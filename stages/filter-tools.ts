/**
 * Stage: filter. A production build removes every dev tool, whatever
 * declared it (a docstring's `Category: dev`, or a dev tool shipped with
 * Forge), before anything is bundled or written.
 */
import type { ProjectTool } from './project-tool.ts';

export interface FilteredTools {
  tools: ProjectTool[];
  stripped: ProjectTool[];
}

export function filterTools(tools: readonly ProjectTool[], options: { prod: boolean }): FilteredTools {
  if (!options.prod) return { tools: [...tools], stripped: [] };
  return {
    tools: tools.filter((t) => t.spec.category !== 'dev'),
    stripped: tools.filter((t) => t.spec.category === 'dev'),
  };
}
