/**
 * Response bodies as text: whether a content type is text a model can read
 * as it is (http_request returns it as text rather than base64; web_fetch
 * returns it without conversion), and the text in the charset it names.
 */
export function isTextual(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0].trim().toLowerCase();
  return type.startsWith('text/') || /[/+](json|xml|javascript|ecmascript|yaml|x-yaml|csv|x-www-form-urlencoded|graphql)$/.test(type) || type === 'application/x-ndjson';
}

/** The body decoded in the content type's charset; UTF-8 when it names none, or one TextDecoder does not know. */
export function decodeText(bytes: Uint8Array, contentType: string | undefined): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}
