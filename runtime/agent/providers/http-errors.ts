/** A provider's error body, as short readable text (both providers put a message in `error.message`). */
export function describeErrorBody(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } | string; message?: string };
    if (typeof parsed.error === 'string') return parsed.error;
    if (parsed.error?.message) return parsed.error.message;
    if (parsed.message) return parsed.message;
  } catch {
    // not JSON
  }
  return body.length > 300 ? `${body.slice(0, 300)}…` : body;
}
