/**
 * An HTTP response body as the value an adapter tool hands a model: JSON
 * parsed when it is JSON and arrived whole, other text as text (capped), and
 * bytes a model cannot read as a marker with their type and size.
 */
import type { HttpResponse } from '../../net/http-client.ts';
import { cap } from './text-cap.ts';

export function responseValue(response: HttpResponse): unknown {
  if (response.body.length === 0) return '';
  const type = (response.headers['content-type'] ?? '').toLowerCase();
  if (/\bjson\b|\+json/.test(type) && !response.truncated) {
    try {
      return JSON.parse(response.body.toString('utf8'));
    } catch {
      // Not the JSON it claims to be: give the text.
    }
  }
  if (type && !/^text\/|json|xml|javascript|x-www-form-urlencoded/.test(type)) {
    return `[binary body: ${type}, ${response.body.length} bytes]`;
  }
  return cap(response.body.toString('utf8'));
}
