/**
 * A WHATWG fetch on top of the HttpClient, for libraries that take a custom
 * fetch (the MCP SDK's Streamable HTTP transport): their requests then pass
 * the same egress checks as every other request — each redirect hop, each
 * resolved address — and the response body streams as it arrives.
 */
import { HttpClient, MAX_TIMEOUT_MS } from './http-client.ts';

export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses whose Response may not carry a body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

export function createPolicyFetch(http: HttpClient, options: { timeoutMs?: number } = {}): FetchFunction {
  return async (input, init = {}) => {
    const request = input instanceof Request ? input : undefined;
    const url = request ? request.url : String(input);
    const headers: Record<string, string> = {};
    new Headers(request?.headers).forEach((value, key) => (headers[key] = value));
    new Headers(init.headers).forEach((value, key) => (headers[key] = value));
    const body = await bodyBytes(init.body ?? (request ? await request.arrayBuffer() : undefined));
    const signal = init.signal ?? request?.signal ?? undefined;
    const stream = await http.stream({
      url,
      method: init.method ?? request?.method ?? 'GET',
      headers,
      body,
      signal,
      redirect: init.redirect === 'manual' ? 'manual' : 'follow',
      // The SDK keeps an event stream open for as long as the session lasts.
      timeoutMs: options.timeoutMs ?? MAX_TIMEOUT_MS,
      timeoutHeadersOnly: true,
    });
    const iterator = stream.body[Symbol.asyncIterator]();
    const readable = NULL_BODY.has(stream.status)
      ? null
      : new ReadableStream<Uint8Array>({
          async pull(controller) {
            try {
              const next = await iterator.next();
              if (next.done) controller.close();
              else controller.enqueue(new Uint8Array(next.value));
            } catch (err) {
              // As fetch does: a body cut short by the signal fails with the signal's reason.
              controller.error(signal?.aborted ? signal.reason : err);
            }
          },
          cancel() {
            stream.close();
          },
        });
    if (!readable) stream.close();
    return new Response(readable, { status: stream.status, statusText: stream.statusText, headers: toHeaders(stream.headers) });
  };
}

async function bodyBytes(body: RequestInit['body'] | ArrayBuffer | undefined): Promise<string | Uint8Array | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  return new Uint8Array(await new Response(body).arrayBuffer());
}

function toHeaders(flat: Record<string, string>): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(flat)) {
    try {
      headers.append(key, value);
    } catch {
      // A header value fetch cannot represent is dropped, as a browser would.
    }
  }
  return headers;
}
