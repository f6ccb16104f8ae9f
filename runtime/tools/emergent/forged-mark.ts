/**
 * What marks a tool as forged, and who may see it. Kept apart (no imports)
 * so every front end can filter by it without carrying forge_tool's code
 * into bundles that do not forge.
 */
import type { Tool } from '../model.ts';

export type Tier = 'session' | 'agent';

export interface ForgedMark {
  tier: Tier;
  /** The session of a session-tier tool (`context:ID`, `mcp:ID`, `stdio`). */
  owner?: string;
  /** Which forge of the name this is (its record's forgedAt): a shared store's removal, or a newer forge, names it. */
  forgedAt?: string;
}

export interface ForgedTool extends Tool {
  forged: ForgedMark;
}

export function isForged(tool: unknown): tool is ForgedTool {
  return typeof tool === 'object' && tool !== null && 'forged' in tool;
}

/** A session-tier forged tool: one session's own, whose name is that session's to know. */
export function isSessionTool(tool: unknown): boolean {
  return isForged(tool) && tool.forged.tier === 'session';
}

/** Whether a caller in `session` (undefined: REST, no session) may see and call `tool`. */
export function visibleTo(tool: unknown, session: string | undefined): boolean {
  if (!isForged(tool)) return true;
  return tool.forged.tier === 'agent' || (session !== undefined && tool.forged.owner === session);
}
