/** Building and reading A2A v1.0 messages, parts and status events (the SDK's internal form). */
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '../../vendor/a2a.ts';
import type { Message, Part, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { cutEnd } from '../../lone-surrogate.ts';

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
 * What the model is given of a new message, part by part in their order: text as it is, a data part as
 * JSON (structured input another agent sends), a file as its text when it is text (a report, a CSV, a
 * JSON document), else a line naming it, so that the model can say what it cannot read. Blank when the
 * message has no part with anything in it.
 */
export function messageForModel(message: Message): string {
  const pieces: string[] = [];
  for (const part of message.parts) {
    if (part.content?.$case === 'text') pieces.push(part.content.value);
    else if (part.content?.$case === 'data') pieces.push(JSON.stringify(part.content.value));
    else if (part.content?.$case === 'raw') pieces.push(fileForModel(part.filename, part.mediaType, part.content.value));
    else if (part.content?.$case === 'url') pieces.push(`[file ${part.filename || 'unnamed'} (${part.mediaType || 'no media type'}) at ${part.content.value}: not fetched]`);
  }
  return pieces.join('\n');
}

/** The most characters of one file a model is given: the rest is cut, and the cut said. */
export const MAX_FILE_CHARS = 100_000;

/** Media types that are never text, whatever their bytes decode to. */
const NOT_TEXT = /^(image|audio|video|font)\/|^application\/(pdf|zip|gzip|x-tar|octet-stream|vnd\.)/i;

function fileForModel(filename: string, mediaType: string, bytes: Uint8Array): string {
  const name = filename || 'unnamed';
  const type = mediaType || 'no media type';
  const text = NOT_TEXT.test(mediaType) ? undefined : utf8Text(bytes);
  if (text === undefined) return `[file ${name} (${type}, ${bytes.length} bytes): not shown, only text files are read]`;
  if (text.length <= MAX_FILE_CHARS) return `[file ${name} (${type})]\n${text}`;
  const end = cutEnd(text, MAX_FILE_CHARS);
  return `[file ${name} (${type})]\n${text.slice(0, end)}\n[… ${text.length - end} more characters of ${name} cut]`;
}

/** The bytes as text when they are UTF-8 without NULs (a binary file seldom is), else undefined. */
function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return text.includes('\0') ? undefined : text;
  } catch {
    return undefined;
  }
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
