/**
 * Security tags as MCP tool annotations, so MCP clients can warn before a
 * destructive call: read → readOnlyHint; write or run (or no security tag,
 * which counts as run) → destructiveHint; adapters and network tools →
 * openWorldHint.
 */
import type { ToolSpec } from '../tools/model.ts';

export interface McpToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  openWorldHint: boolean;
}

const NETWORK_TAGS = new Set(['network', 'web', 'http', 'internet']);

export function toolAnnotations(spec: ToolSpec): McpToolAnnotations {
  const writes = spec.tags.includes('write') || spec.tags.includes('run');
  const reads = spec.tags.includes('read');
  const untagged = !reads && !writes;
  return {
    title: spec.name,
    readOnlyHint: reads && !writes,
    destructiveHint: writes || untagged,
    openWorldHint: spec.category === 'adapter' || spec.tags.some((t) => NETWORK_TAGS.has(t)),
  };
}
