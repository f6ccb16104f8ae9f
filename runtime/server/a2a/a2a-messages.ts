/** Building and reading A2A v1.0 messages, parts and status events (the SDK's internal form). */
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '../../vendor/protocol.ts';
import type { Message, Part, TaskStatusUpdateEvent } from '@a2a-js/sdk';

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

export function dataPart(data: unknown): Part {
  return { content: { $case: 'data', value: data }, metadata: undefined, filename: '', mediaType: 'application/json' };
}

export function agentMessage(taskId: string, contextId: string, parts: Part[]): Message {
  return { messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

export function statusEvent(taskId: string, contextId: string, state: TaskState, message?: Message): TaskStatusUpdateEvent {
  return { taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: undefined };
}

/**
 * What the model is given of a new message: its text parts, and each data part as JSON (structured
 * input another agent sends), in their order. File parts are not read. Blank when it has neither.
 */
export function messageForModel(message: Message): string {
  const pieces: string[] = [];
  for (const part of message.parts) {
    if (part.content?.$case === 'text') pieces.push(part.content.value);
    else if (part.content?.$case === 'data') pieces.push(JSON.stringify(part.content.value));
  }
  return pieces.join('\n');
}

/** The text of a message (text parts joined) and its first data part, if any. */
export function readMessage(message: Message): { text: string; data: unknown } {
  let text = '';
  let data: unknown;
  for (const part of message.parts) {
    if (part.content?.$case === 'text') text += (text ? '\n' : '') + part.content.value;
    else if (part.content?.$case === 'data' && data === undefined) data = part.content.value;
  }
  return { text, data };
}
