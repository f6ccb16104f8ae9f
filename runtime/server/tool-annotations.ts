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

interface Reach {
  writes: boolean;
  readOnly: boolean;
  openWorld: boolean;
}

/**
 * `lookup` finds the tools a composed tool calls; one it cannot find counts as untagged (run).
 * `memo` shares what each tool reaches across one listing (each tool is then walked once).
 */
export function toolAnnotations(spec: ToolSpec, lookup: (name: string) => ToolSpec | undefined = () => undefined, memo = new Map<string, Reach>()): McpToolAnnotations {
  const reach = reachOf(spec, lookup, memo, new Set());
  return { title: spec.name, readOnlyHint: reach.readOnly && !reach.writes, destructiveHint: reach.writes, openWorldHint: reach.openWorld };
}

function reachOf(tool: ToolSpec | undefined, lookup: (name: string) => ToolSpec | undefined, memo: Map<string, Reach>, open: Set<string>): Reach {
  if (!tool) return { writes: true, readOnly: false, openWorld: false };
  const known = memo.get(tool.name);
  if (known) return known;
  const toolWrites = tool.tags.includes('write') || tool.tags.includes('run');
  const toolReads = tool.tags.includes('read');
  const reach: Reach = { writes: toolWrites || !toolReads, readOnly: toolReads && !toolWrites, openWorld: tool.category === 'adapter' || tool.tags.some((t) => NETWORK_TAGS.has(t)) };
  // A cycle (refused at build, and by the registry) adds nothing more from the tool already being walked.
  if (open.has(tool.name)) return reach;
  open.add(tool.name);
  for (const name of tool.composedOf ?? []) {
    const next = reachOf(lookup(name), lookup, memo, open);
    reach.writes ||= next.writes;
    reach.readOnly &&= next.readOnly;
    reach.openWorld ||= next.openWorld;
  }
  open.delete(tool.name);
  memo.set(tool.name, reach);
  return reach;
}
