/**
 * An HTTP response body as the value an adapter tool hands a model: JSON
 * parsed when it is JSON and arrived whole, other text as text (capped), and
 * bytes a model cannot read as a marker with their type and size.
 */
import type { HttpResponse } from '../../net/http-client.ts';
import { decodeText, isTextual } from '../../net/text-content.ts';
import { cap } from './text-cap.ts';

export function responseValue(response: HttpResponse): unknown {
  if (response.body.length === 0) return '';
  const contentType = response.headers['content-type'];
  // No content type: most likely text; a model is better served by a try than by a marker.
  if (contentType && !isTextual(contentType)) return `[binary body: ${contentType.split(';')[0].trim().toLowerCase()}, ${response.body.length} bytes]`;
  const text = decodeText(response.body, contentType);
  if (/\bjson\b/i.test(contentType ?? '') && !response.truncated) {
    try {
      return JSON.parse(text);
    } catch {
      // Not the JSON it claims to be: give the text.
    }
  }
  return cap(text);
}
