/**
 * The studio's chat: a message (or a person's approval answers) in, the
 * turn streamed back as server-sent events — text as it arrives, each tool
 * call and its result, the approvals it waits for, and how it ended.
 */
import type { ServerResponse } from 'node:http';
import type { AgentEvent, AgentOutcome } from '../../runtime/agent/agent-loop.ts';
import type { Agent } from '../../runtime/agent/agent.ts';
import { activeSpan } from '../../runtime/telemetry/tracer.ts';
import type { ToolRegistry } from '../../runtime/tools/registry.ts';

export type ChatRequest = { contextId: string; text: string } | { contextId: string; answers: Map<string, boolean> };

export async function streamTurn(res: ServerResponse, agent: Agent, registry: ToolRegistry, request: ChatRequest): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
  const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  // The page finds this turn's timeline by its trace id.
  const traceId = activeSpan()?.recording ? activeSpan()!.context.traceId : undefined;
  send('start', { contextId: request.contextId, traceId });
  const onEvent = (event: AgentEvent) => {
    if (event.type === 'text') send('text', { delta: event.delta });
    else if (event.type === 'tool-call') send('tool-call', { ...event.call, category: registry.get(event.call.name)?.category });
    else if (event.type === 'tool-result') send('tool-result', { id: event.call.id, result: event.result, durationMs: event.result.durationMs });
    else send('approval-needed', { requests: event.requests });
  };
  const turn = { onEvent, stream: true, signal: controller.signal };
  try {
    const outcome: AgentOutcome = 'answers' in request ? await agent.resume(request.contextId, request.answers, turn) : await agent.send(request.contextId, request.text, turn);
    send('done', outcome.status === 'input-required' ? { status: outcome.status, requests: outcome.requests } : { status: outcome.status, text: outcome.text });
  } catch (err) {
    send('failed', { message: (err as Error).message });
  }
  res.end();
}

/** The body of POST /studio/api/chat and /studio/api/approve, or why it is wrong. */
export function parseChatRequest(body: Buffer, kind: 'chat' | 'approve'): ChatRequest | string {
  let data: { contextId?: unknown; text?: unknown; answers?: unknown };
  try {
    data = JSON.parse(body.toString('utf8'));
  } catch {
    return 'the body is not valid JSON';
  }
  if (typeof data?.contextId !== 'string' || !/^[\w.-]{1,100}$/.test(data.contextId)) return 'contextId must be a short name (letters, digits, . _ -)';
  if (kind === 'chat') return typeof data.text === 'string' && data.text.trim() ? { contextId: data.contextId, text: data.text } : 'text must be a non-empty string';
  if (!data.answers || typeof data.answers !== 'object' || Array.isArray(data.answers)) return 'answers must map call ids to true or false';
  // A Map: no call id ("__proto__" neither) can reach anything but its own answer.
  return { contextId: data.contextId, answers: new Map(Object.entries(data.answers).map(([id, yes]) => [id, yes === true])) };
}
