// The studio's link to its server: the bearer token (taken once from the
// URL fragment into this tab's sessionStorage), JSON calls, and event
// streams read with fetch (EventSource cannot send an Authorization header).
import { createParser } from 'eventsource-parser';

const KEY = 'forge-studio-token';

export function takeToken() {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(KEY, decodeURIComponent(match[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(KEY) ?? undefined;
}

const token = takeToken();

function headers(extra = {}) {
  return token ? { ...extra, authorization: `Bearer ${token}` } : extra;
}

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.hint = body?.error?.hint;
  }
}

export async function getJson(path) {
  const response = await fetch(path, { headers: headers() });
  const body = await response.json().catch(() => undefined);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

/** POST /tools/:name: the tool's result whatever the status (an error result is still a result). */
export async function runTool(name, args) {
  const started = performance.now();
  const response = await fetch(`/tools/${encodeURIComponent(name)}`, { method: 'POST', headers: headers({ 'content-type': 'application/json' }), body: JSON.stringify(args) });
  const body = await response.json().catch(() => undefined);
  if (response.status === 401) throw new ApiError(401, body);
  return { status: response.status, result: body, ms: performance.now() - started };
}

/** Reads a server-sent event stream; resolves when it ends. */
export async function stream(path, init, onEvent, signal) {
  const response = await fetch(path, { ...init, signal, headers: headers(init.headers ?? {}) });
  if (!response.ok || !response.body) {
    const body = await response.json().catch(() => undefined);
    throw new ApiError(response.status, body);
  }
  const parser = createParser({ onEvent: (e) => onEvent(e.event ?? 'message', JSON.parse(e.data)) });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    parser.feed(value);
  }
}

export const hasToken = () => token !== undefined;
