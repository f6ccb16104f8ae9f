/**
 * Forge's tracer: spans shaped like OpenTelemetry's (trace and span ids,
 * parent, kind, attributes, status), kept in an AsyncLocalStorage so that a
 * model call made inside a turn is that turn's child without anyone passing
 * a span along. With no span processor (no OTLP endpoint, no studio) every
 * span is one shared no-op object: tracing off costs a branch per call.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { redactSecrets } from '../known-secrets.ts';
import { newSpanId, newTraceId, type SpanContext } from './trace-context.ts';

export type AttributeValue = string | number | boolean | string[];
export type Attributes = Record<string, AttributeValue | undefined>;
export type SpanKind = 'internal' | 'server' | 'client';

export interface FinishedSpan {
  name: string;
  kind: SpanKind;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  /** Milliseconds since the epoch (fractional). */
  startTime: number;
  endTime: number;
  attributes: Record<string, AttributeValue>;
  status: { code: 'unset' | 'ok' | 'error'; message?: string };
  events: { name: string; time: number; attributes?: Record<string, AttributeValue> }[];
}

export interface Span {
  readonly recording: boolean;
  readonly context: SpanContext;
  setAttribute(key: string, value: AttributeValue | undefined): void;
  setAttributes(attributes: Attributes): void;
  addEvent(name: string, attributes?: Attributes): void;
  setError(message: string): void;
  end(): void;
}

export type SpanProcessor = (span: FinishedSpan) => void;

/** What flows with the async context: the current span, and which front end the work came in by. */
export interface TraceScope {
  span?: Span;
  /** Incoming trace context (traceparent) not yet turned into a span. */
  remote?: SpanContext;
  frontend?: string;
  /** Set inside a tool-call span so that nested wrappers do not open a second one. */
  toolSpan?: boolean;
}

const storage = new AsyncLocalStorage<TraceScope>();
const processors = new Set<SpanProcessor>();

const NOOP_CONTEXT: SpanContext = { traceId: '0'.repeat(32), spanId: '0'.repeat(16), sampled: false };
const NOOP_SPAN: Span = {
  recording: false,
  context: NOOP_CONTEXT,
  setAttribute() {},
  setAttributes() {},
  addEvent() {},
  setError() {},
  end() {},
};

class RecordingSpan implements Span {
  readonly recording = true;
  readonly context: SpanContext;
  private readonly data: FinishedSpan;
  private ended = false;

  constructor(name: string, kind: SpanKind, parent: SpanContext | undefined, attributes: Attributes, startTime: number) {
    this.context = { traceId: parent?.traceId ?? newTraceId(), spanId: newSpanId(), sampled: true };
    this.data = { name, kind, traceId: this.context.traceId, spanId: this.context.spanId, parentSpanId: parent?.spanId, startTime, endTime: startTime, attributes: {}, status: { code: 'unset' }, events: [] };
    this.setAttributes(attributes);
  }

  setAttribute(key: string, value: AttributeValue | undefined): void {
    if (value !== undefined) this.data.attributes[key] = value;
  }

  setAttributes(attributes: Attributes): void {
    for (const key in attributes) this.setAttribute(key, attributes[key]);
  }

  addEvent(name: string, attributes?: Attributes): void {
    const clean: Record<string, AttributeValue> = {};
    for (const key in attributes) if (attributes[key] !== undefined) clean[key] = attributes[key]!;
    this.data.events.push({ name, time: nowMs(), attributes: clean });
  }

  setError(message: string): void {
    // An error's text may quote a credential (a gateway echoing the key it got).
    this.data.status = { code: 'error', message: redactSecrets(message) };
  }

  end(endTime = nowMs()): void {
    if (this.ended) return;
    this.ended = true;
    this.data.endTime = endTime;
    for (const processor of processors) {
      try {
        processor(this.data);
      } catch {
        // An exporter's failure must never fail the work it observes.
      }
    }
  }
}

/**
 * Wall-clock milliseconds with sub-millisecond precision (spans of one process compare well). The origin is
 * taken at the first call, not at load: the first read of `performance` loads perf_hooks.
 */
let origin: number | undefined;
export function nowMs(): number {
  origin ??= Date.now() - performance.now();
  return origin + performance.now();
}

export function tracingEnabled(): boolean {
  return processors.size > 0;
}

/** Adds a consumer of finished spans (the OTLP exporter, the studio); returns its removal. */
export function addSpanProcessor(processor: SpanProcessor): () => void {
  processors.add(processor);
  return () => processors.delete(processor);
}

export function currentScope(): TraceScope | undefined {
  return storage.getStore();
}

export function activeSpan(): Span | undefined {
  return storage.getStore()?.span;
}

/** Starts a span, the child of the active span (or of an incoming traceparent). */
export function startSpan(name: string, attributes: Attributes = {}, options: { kind?: SpanKind; startTime?: number; parent?: SpanContext } = {}): Span {
  if (processors.size === 0) return NOOP_SPAN;
  const scope = storage.getStore();
  const parent = options.parent ?? (scope?.span?.recording ? scope.span.context : scope?.remote);
  return new RecordingSpan(name, options.kind ?? 'internal', parent, attributes, options.startTime ?? nowMs());
}

/** Runs `work` with `span` active (and `extra` merged into the scope). */
export function withSpan<T>(span: Span, work: () => T, extra: Partial<TraceScope> = {}): T {
  return storage.run({ ...storage.getStore(), ...extra, span }, work);
}

/**
 * Runs `work` as a span: ended when it settles, marked as an error when it throws, unless `notAnError`
 * says the throw is none (a turn its client canceled): that span's status stays unset, as OpenTelemetry
 * asks of anything but a failure, and `work` says what happened in its attributes.
 */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>, options: { kind?: SpanKind; notAnError?: () => boolean } = {}): Promise<T> {
  if (processors.size === 0) return work(NOOP_SPAN);
  const span = startSpan(name, attributes, { kind: options.kind });
  try {
    return await withSpan(span, () => work(span));
  } catch (err) {
    if (!options.notAnError?.()) span.setError((err as Error).message);
    throw err;
  } finally {
    span.end();
  }
}
