/**
 * A message's contextId names its conversation, and a shared store keys a
 * row and an index entry by it. Postgres refuses an index entry over 2,704
 * bytes, so a longer id failed the turn after the SDK had made its task; the
 * memory and file stores took it. Every store now takes the same ids: a
 * message with a longer one is refused up front, as a malformed request, on
 * both protocol generations (their transports share this handler).
 */
import type { DefaultRequestHandler } from '@a2a-js/sdk/server';
import { RequestMalformedError } from '../../vendor/a2a.ts';

/** Characters (UTF-16 code units). Escaped for Postgres (postgres-text.ts), one takes at most 6 bytes: 1,536 in all. */
export const MAX_CONTEXT_ID_LENGTH = 256;

function checkContextId(params: { message?: { contextId?: unknown } }): void {
  const contextId = params?.message?.contextId;
  if (typeof contextId === 'string' && contextId.length > MAX_CONTEXT_ID_LENGTH) {
    throw new RequestMalformedError(`contextId is ${contextId.length} characters long; at most ${MAX_CONTEXT_ID_LENGTH} are taken (it names the conversation, and the state store keys it)`);
  }
}

export function refuseLongContextIds(handler: DefaultRequestHandler): void {
  const send = handler.sendMessage.bind(handler);
  handler.sendMessage = async (params, context) => {
    checkContextId(params);
    return send(params, context);
  };
  const stream = handler.sendMessageStream.bind(handler);
  handler.sendMessageStream = async function* (params, context) {
    checkContextId(params);
    yield* stream(params, context);
  };
}
