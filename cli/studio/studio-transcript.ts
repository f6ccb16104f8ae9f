/**
 * A stored conversation as the studio's chat shows it: the person's
 * messages, the model's text, each tool call with its result, and the
 * calls still waiting for an approval. A page opened again (a reload)
 * shows what the model has, not an empty chat over a kept conversation.
 */
import { waitingCalls } from '../../runtime/agent/agent-loop.ts';
import type { ToolCall } from '../../runtime/agent/messages.ts';
import { parseToolResultText, type ToolResultFromText } from '../../runtime/agent/tool-output.ts';
import type { Session } from '../../runtime/state/store.ts';

export type TranscriptItem =
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string }
  | { kind: 'tool'; id: string; name: string; arguments: unknown; category?: string; result?: ToolResultFromText }
  | { kind: 'approval'; requests: { callId: string; tool: string; arguments: unknown; reason: string }[] };

export function transcriptItems(session: Pick<Session, 'messages' | 'pending'>, categoryOf: (tool: string) => string | undefined = () => undefined): TranscriptItem[] {
  const items: TranscriptItem[] = [];
  const tools = new Map<string, Extract<TranscriptItem, { kind: 'tool' }>>();
  const paused = new Set(session.pending?.calls.map((c) => c.id));
  for (const message of session.messages) {
    if (message.role === 'user') items.push({ kind: 'user', text: message.content });
    else if (message.role === 'assistant') {
      if (message.content) items.push({ kind: 'assistant', text: message.content });
      // The calls of a paused batch show once they run (as they do live); the approval stands for them.
      for (const call of message.toolCalls ?? []) if (!paused.has(call.id)) items.push(toolItem(call, categoryOf, tools));
    } else {
      const item = tools.get(message.toolCallId);
      // The result as the model saw it, read back from its text by the runtime that wrote it.
      if (item) item.result = parseToolResultText({ text: message.content, isError: message.isError, form: message.form });
    }
  }
  if (session.pending) {
    const requests = waitingCalls(session.pending).map((c) => ({ callId: c.id, tool: c.name, arguments: c.arguments, reason: 'waiting since an earlier turn' }));
    if (requests.length) items.push({ kind: 'approval', requests });
  }
  return items;
}

function toolItem(call: ToolCall, categoryOf: (tool: string) => string | undefined, tools: Map<string, Extract<TranscriptItem, { kind: 'tool' }>>) {
  const category = categoryOf(call.name);
  const item: Extract<TranscriptItem, { kind: 'tool' }> = { kind: 'tool', id: call.id, name: call.name, arguments: call.arguments, ...(category ? { category } : {}) };
  tools.set(call.id, item);
  return item;
}
