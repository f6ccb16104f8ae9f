/**
 * Turns an OpenAPI operation's arguments into an HTTP request: path
 * parameters into the path (percent-encoded), query parameters by their
 * style (form, exploded or not; deepObject), headers and cookies, and the
 * body as JSON or as a form.
 */
import { LONE_SURROGATE } from '../../../lone-surrogate.ts';
import type { OpenApiBinding, OpenApiParameter } from '../settings.ts';

export interface ApiRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

export function buildApiRequest(binding: OpenApiBinding, baseUrl: string, args: Record<string, unknown>): ApiRequest {
  let path = binding.path;
  const query: [string, string][] = [];
  const headers: Record<string, string> = {};
  const cookies: string[] = [];

  for (const param of binding.parameters) {
    const value = args[param.arg];
    if (value === undefined || value === null) continue;
    switch (param.in) {
      case 'path':
        path = path.split(`{${param.name}}`).join(pathValue(param.name, exactText(param, simpleValue(value))));
        break;
      case 'query':
        for (const [key, text] of queryPairs(param, value)) query.push([exactText(param, key), exactText(param, text)]);
        break;
      case 'header':
        headers[param.name.toLowerCase()] = headerValue(param, simpleValue(value));
        break;
      case 'cookie':
        cookies.push(`${param.name}=${encodeURIComponent(exactText(param, simpleValue(value)))}`);
        break;
    }
  }
  if (cookies.length) headers.cookie = cookies.join('; ');

  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const [key, value] of query) url.searchParams.append(key, value);

  const request: ApiRequest = { url, method: binding.method.toUpperCase(), headers };
  const body = binding.body ? bodyValue(binding.body, args) : undefined;
  if (binding.body && body !== undefined) {
    headers['content-type'] = binding.body.contentType;
    // JSON writes half of a surrogate pair as an escape; a form would silently turn it into U+FFFD.
    request.body = binding.body.contentType === 'application/x-www-form-urlencoded' ? formBody(body) : JSON.stringify(body);
  }
  return request;
}

function bodyValue(body: NonNullable<OpenApiBinding['body']>, args: Record<string, unknown>): unknown {
  if (body.arg) return args[body.arg];
  const object: Record<string, unknown> = {};
  for (const key of body.properties ?? []) if (args[key] !== undefined) object[key] = args[key];
  return Object.keys(object).length || body.required ? object : undefined;
}

/**
 * A path parameter's value, percent-encoded (a "/" in it stays inside the segment). An empty value,
 * "." or ".." would change which endpoint is called (/items/ is the collection, /items/.. its parent:
 * URL parsers resolve dot segments), so they are refused. "%2e" is sent as %252e, a name like any other.
 */
function pathValue(name: string, text: string): string {
  if (text === '' || text === '.' || text === '..') throw new Error(`path parameter "${name}" may not be ${text === '' ? 'empty' : `"${text}"`}: it would change which endpoint is called`);
  return encodeURIComponent(text);
}

/**
 * Refuses half of a surrogate pair (JSON.parse makes one of "\ud800"): a URL and a form are UTF-8,
 * which has no form for it, and would carry U+FFFD instead (encodeURIComponent throws "URI malformed").
 */
function exactText(of: OpenApiParameter | string, text: string): string {
  const subject = typeof of === 'string' ? of : `parameter "${of.name}"`;
  if (LONE_SURROGATE.test(text)) throw new Error(`${subject} holds half of a surrogate pair, which has no UTF-8 form`);
  return text;
}

/** What Node sends as a header value: Latin-1 without control characters (a tab allowed), so no line break either. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

function headerValue(param: OpenApiParameter, text: string): string {
  if (!HEADER_VALUE.test(text)) throw new Error(`header parameter "${param.name}" may hold only Latin-1 characters without line breaks or other control characters`);
  return text;
}

/** The "simple" style: arrays and objects as comma-separated values. */
function simpleValue(value: unknown): string {
  if (Array.isArray(value)) return value.map(String).join(',');
  if (value && typeof value === 'object') return Object.entries(value).flat().map(String).join(',');
  return String(value);
}

function queryPairs(param: OpenApiParameter, value: unknown): [string, string][] {
  const explode = param.explode ?? (param.style ?? 'form') === 'form';
  if (Array.isArray(value)) {
    if (param.style === 'spaceDelimited') return [[param.name, value.join(' ')]];
    if (param.style === 'pipeDelimited') return [[param.name, value.join('|')]];
    return explode ? value.map((v) => [param.name, String(v)]) : [[param.name, value.map(String).join(',')]];
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (param.style === 'deepObject') return entries.map(([k, v]) => [`${param.name}[${k}]`, String(v)]);
    return explode ? entries.map(([k, v]) => [k, String(v)]) : [[param.name, entries.flat().map(String).join(',')]];
  }
  return [[param.name, String(value)]];
}

function formBody(value: unknown): string {
  const form = new URLSearchParams();
  for (const [key, v] of Object.entries((value ?? {}) as Record<string, unknown>)) {
    const field = `form field "${key}"`;
    const append = (text: string) => form.append(exactText(field, key), exactText(field, text));
    if (Array.isArray(v)) for (const item of v) append(String(item));
    else if (v && typeof v === 'object') append(JSON.stringify(v));
    else if (v !== undefined) append(String(v));
  }
  return form.toString();
}
