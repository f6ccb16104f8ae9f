/**
 * What a tool reaches when it runs: itself and every tool it calls, directly
 * or not (a TypeScript tool's Composed Of, a YAML tool's tool: steps — both
 * recorded as composedOf). Whoever starts one tool alone (`forge tool run`,
 * the bundle's `call`) prepares only what these need: the MCP servers they
 * use, the Python packages when one of them runs Python.
 */
import type { ToolSpec } from './model.ts';

/** `start` and every tool it reaches through composedOf, each once; a name no tool has is skipped (it is reported elsewhere). */
export function toolsReached<T>(start: T, all: readonly T[], specOf: (tool: T) => ToolSpec): T[] {
  const byName = new Map(all.map((t) => [specOf(t).name, t]));
  const reached: T[] = [];
  const seen = new Set<string>();
  const visit = (tool: T | undefined) => {
    if (tool === undefined || seen.has(specOf(tool).name)) return;
    seen.add(specOf(tool).name);
    reached.push(tool);
    for (const next of specOf(tool).composedOf ?? []) visit(byName.get(next));
  };
  visit(start);
  return reached;
}

/** The tool's own code is Python, or one of its YAML steps runs python: it needs the declared Python packages. */
export function runsPython(spec: ToolSpec): boolean {
  return spec.source?.kind === 'python' || (spec.source?.interpreters?.includes('python') ?? false);
}
