/** Outgoing requests carry the active span as a W3C traceparent, so the model server or API joins the trace. */
import { formatTraceparent } from './trace-context.ts';
import { activeSpan } from './tracer.ts';

export function withTraceparent(headers: Record<string, string>): Record<string, string> {
  const span = activeSpan();
  if (!span?.recording || headers.traceparent) return headers;
  return { ...headers, traceparent: formatTraceparent(span.context) };
}
