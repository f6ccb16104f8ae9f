/**
 * Sending a request to a model provider: one POST whose answer is either
 * JSON or server-sent events. A network failure or an error status becomes
 * a ProviderError with the provider's own message, so the next fallback is
 * tried. Both wire formats share this.
 */
import type { HttpClient, HttpStream } from '../../net/http-client.ts';
import { ProviderError } from '../messages.ts';
import { describeErrorBody } from './http-errors.ts';

export const PROVIDER_TIMEOUT_MS = 120_000;

export async function postToProvider(
  label: string,
  http: HttpClient,
  request: { url: string; headers: Record<string, string>; body: unknown; timeoutMs?: number; signal?: AbortSignal },
): Promise<{ response: HttpStream; streaming: boolean }> {
  let response: HttpStream;
  try {
    response = await http.stream({ url: request.url, method: 'POST', headers: request.headers, body: JSON.stringify(request.body), timeoutMs: request.timeoutMs ?? PROVIDER_TIMEOUT_MS, signal: request.signal });
  } catch (err) {
    throw new ProviderError(label, (err as Error).message);
  }
  if (response.status < 200 || response.status >= 300) {
    throw new ProviderError(label, `HTTP ${response.status}: ${describeErrorBody(await readAll(response))}`, response.status);
  }
  return { response, streaming: (response.headers['content-type'] ?? '').includes('text/event-stream') };
}

/** The whole body as UTF-8, decoded once: a character split across two chunks stays whole. */
export async function readAll(response: HttpStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A stream that ended cleanly but without the provider's end marker: a proxy
 * or the provider cut it short. The text so far is not the answer and a tool
 * call's arguments may be half their JSON, so it is a failure like a reset
 * connection — the next fallback is tried when nothing was streamed yet.
 */
export function incompleteStream(label: string, missing: string, streamed: boolean): ProviderError {
  return new ProviderError(label, `stream ended before the answer was complete (${missing})`, undefined, streamed);
}
