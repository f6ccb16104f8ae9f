/**
 * Security tags as MCP tool annotations, so MCP clients can warn before a
 * destructive call: read → readOnlyHint; write or run (or no security tag,
 * which counts as run) → destructiveHint; adapters and network tools →
 * openWorldHint. A composed tool is what it and every tool it reaches
 * through composedOf are: a "read" tool whose steps write is destructive
 * (a client that lets read-only tools through unasked would run its writes).
 */
import type { ToolSpec } from '../tools/model.ts';

export interface McpToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  openWorldHint: boolean;
}

const NETWORK_TAGS = new Set(['network', 'web', 'http', 'internet']);

/** `lookup` finds the tools a composed tool calls; one it cannot find counts as untagged (run). */
export function toolAnnotations(spec: ToolSpec, lookup: (name: string) => ToolSpec | undefined = () => undefined): McpToolAnnotations {
  let writes = false;
  let reads = true;
  let openWorld = false;
  const seen = new Set<string>();
  const visit = (tool: ToolSpec | undefined) => {
    if (!tool) return void (writes = true);
    if (seen.has(tool.name)) return;
    seen.add(tool.name);
    const toolWrites = tool.tags.includes('write') || tool.tags.includes('run');
    const toolReads = tool.tags.includes('read');
    if (toolWrites || !toolReads) writes = true;
    if (!toolReads || toolWrites) reads = false;
    if (tool.category === 'adapter' || tool.tags.some((t) => NETWORK_TAGS.has(t))) openWorld = true;
    for (const name of tool.composedOf ?? []) visit(lookup(name));
  };
  visit(spec);
  return { title: spec.name, readOnlyHint: reads && !writes, destructiveHint: writes, openWorldHint: openWorld };
}
