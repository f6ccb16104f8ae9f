/**
 * The names of the sessions a session-tier forged tool belongs to, as its
 * record's `owner` says them: the state stores remove a session's tools when
 * the session ends (a conversation past its retention, an MCP session
 * closed), and forge_tool marks the tools with the same names.
 */

/** The session of an A2A conversation (its context id), as a session-tier tool forged in it names its owner. */
export function conversationSession(contextId: string): string {
  return `context:${contextId}`;
}

/** The context id of the conversation a session-tier tool's owner names, or undefined: the owner is no conversation. */
export function sessionConversation(owner: string): string | undefined {
  return owner.startsWith('context:') ? owner.slice('context:'.length) : undefined;
}

/** The session of a stateful MCP session: a new owner for each, made in the process that serves it. */
export function mcpSession(id: string): string {
  return `mcp:${id}`;
}

export function isMcpSession(owner: string): boolean {
  return owner.startsWith('mcp:');
}
