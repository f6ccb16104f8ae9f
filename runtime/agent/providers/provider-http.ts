/**
 * Sending a request to a model provider: one POST whose answer is either
 * JSON or server-sent events. A network failure or an error status becomes
 * a ProviderError with the provider's own message, so the next fallback is
 * tried. Both wire formats share this.
 */
import { HttpError, MAX_TIMEOUT_MS, type HttpClient, type HttpStream } from '../../net/http-client.ts';
import { ProviderError } from '../messages.ts';
import { describeErrorBody } from './http-errors.ts';

/**
 * How long a model may take to answer: its response's headers within PROVIDER_TIMEOUT_MS (an answer
 * sent whole as JSON comes all at once after it is generated), then no gap in the body longer than
 * PROVIDER_IDLE_MS. A streamed answer may take as long as it keeps coming: a long one from a slow
 * local model (4,000 tokens at 10 a second is 7 minutes) is not cut off by a deadline on the whole,
 * and a reasoning model may think for minutes before its first word.
 */
export const PROVIDER_TIMEOUT_MS = MAX_TIMEOUT_MS;
export const PROVIDER_IDLE_MS = 300_000;

/** How to reach one model, in either wire format. */
export interface ProviderOptions {
  model: string;
  baseUrl?: string;
  /** Local servers (Ollama, llama.cpp) usually need none. */
  apiKey?: string;
  http: HttpClient;
  /** To the response's headers, and the longest gap in its body (see above). */
  timeoutMs?: number;
  idleMs?: number;
  /** Fields added to every request (model.extra_body): Forge's own fields are never taken from it (extraFields). */
  extraBody?: Record<string, unknown>;
}

export async function postToProvider(
  label: string,
  http: HttpClient,
  request: { url: string; headers: Record<string, string>; body: unknown; timeoutMs?: number; idleMs?: number; signal?: AbortSignal },
): Promise<{ response: HttpStream; streaming: boolean }> {
  let response: HttpStream;
  try {
    const answered = await http.stream({ url: request.url, method: 'POST', headers: request.headers, body: JSON.stringify(request.body), timeoutMs: request.timeoutMs ?? PROVIDER_TIMEOUT_MS, timeoutHeadersOnly: true, signal: request.signal });
    response = { ...answered, body: whileFlowing(answered, request.idleMs ?? PROVIDER_IDLE_MS) };
  } catch (err) {
    // A connection refused, reset or dropped may work the next time; a timeout, an egress refusal or a bad URL would not.
    const dropped = err instanceof HttpError && err.code === 'FORGE_HTTP_NETWORK';
    throw new ProviderError(label, (err as Error).message, undefined, false, dropped ? {} : undefined);
  }
  if (response.status < 200 || response.status >= 300) {
    const transient = isTransientStatus(response.status) ? { afterMs: retryAfterMs(response.headers) } : undefined;
    throw new ProviderError(label, `HTTP ${response.status}: ${describeErrorBody(await readAll(response))}`, response.status, false, transient);
  }
  return { response, streaming: (response.headers['content-type'] ?? '').includes('text/event-stream') };
}

/**
 * The answers the OpenAI and Anthropic SDKs ask again on: a timeout (408), a conflict (409), rate
 * limited (429), the server's own failures (5xx; Anthropic's 529 is "overloaded").
 */
function isTransientStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** How long the provider asked to wait: `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Record<string, string>, now = Date.now()): number | undefined {
  const ms = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers['retry-after'];
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The body's chunks, the connection closed with FORGE_HTTP_TIMEOUT when none arrives for `idleMs`.
 * One timer, pushed back at each chunk (a streamed answer has one per token).
 */
async function* whileFlowing(response: HttpStream, idleMs: number): AsyncGenerator<Buffer> {
  let idle = false;
  const timer = setTimeout(() => {
    idle = true;
    response.close();
  }, idleMs);
  let ended = false;
  try {
    for await (const chunk of response.body) {
      timer.refresh();
      yield chunk;
    }
    ended = !idle;
  } catch (err) {
    if (!idle) throw err;
  } finally {
    clearTimeout(timer);
    // Given up on (the reader stopped): the connection goes, and nothing is left reading it.
    if (!ended && !idle) response.close();
  }
  // Closed for the gap, the body ends (or fails) as a closed socket does: said as what it was.
  if (idle) throw new HttpError(`no data for ${idleMs / 1000} s`, 'FORGE_HTTP_TIMEOUT');
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
  return new ProviderError(label, `stream ended before the answer was complete (${missing})`, undefined, streamed, {});
}

/** A stream that broke (reset, cut by a proxy) before its end: asked again when nothing has been streamed yet. */
export function brokenStream(label: string, err: unknown, streamed: boolean): ProviderError {
  if (err instanceof ProviderError) return err;
  return new ProviderError(label, `stream broke off: ${(err as Error).message}`, undefined, streamed, {});
}
