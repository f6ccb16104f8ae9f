/**
 * Sends finished spans to an OpenTelemetry collector over OTLP/HTTP with
 * the JSON encoding, in batches (OTEL_BSP_SCHEDULE_DELAY, default 5 s, or
 * 512 spans), with the standard variables: the endpoint, headers, timeout,
 * OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. Loaded only when an
 * endpoint is configured. It posts with node:http itself, not the agent's
 * HTTP client: telemetry is the operator's, not subject to the agent's
 * egress policy, and must not trace its own requests.
 */
import { request as httpRequest } from 'node:http';
import { rememberSecret } from '../known-secrets.ts';
import type { Logger } from '../tools/model.ts';
import type { AttributeValue, FinishedSpan } from './tracer.ts';
import { timerDelay } from '../duration.ts';

const KIND = { internal: 1, server: 2, client: 3 } as const;
const STATUS = { unset: 0, ok: 1, error: 2 } as const;
const MAX_BATCH = 512;
const MAX_QUEUE = 2048;

export interface OtlpSettings {
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  delayMs: number;
  resource: Record<string, string>;
}

export interface OtlpExporter {
  export(span: FinishedSpan): void;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** The settings from the environment, as the OpenTelemetry specification names them; undefined when tracing is not configured. */
export function otlpSettings(env: NodeJS.ProcessEnv, defaults: { serviceName: string; serviceVersion?: string }): OtlpSettings | undefined {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const general = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const url = specific || (general ? `${general.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!url) return undefined;
  const resource: Record<string, string> = { ...parsePairs(env.OTEL_RESOURCE_ATTRIBUTES), 'telemetry.sdk.name': 'forge', 'telemetry.sdk.language': 'nodejs' };
  resource['service.name'] = env.OTEL_SERVICE_NAME?.trim() || resource['service.name'] || defaults.serviceName;
  if (defaults.serviceVersion) resource['service.version'] ??= defaults.serviceVersion;
  return {
    url,
    headers: { ...parsePairs(env.OTEL_EXPORTER_OTLP_HEADERS), ...parsePairs(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    timeoutMs: positiveMs(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT) ?? 10_000,
    delayMs: positiveMs(env.OTEL_BSP_SCHEDULE_DELAY) ?? 5_000,
    resource,
  };
}

/** `k1=v1,k2=v2` with percent-encoded values (the W3C Baggage-like format the specification uses). */
function parsePairs(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    try {
      out[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
    }
  }
  return out;
}

/**
 * The collector's credentials (OTEL_EXPORTER_OTLP_HEADERS='x-api-key=…', a
 * password or a key in the endpoint's URL) are secrets the runtime holds:
 * remembered, so that a log line quoting the endpoint masks them.
 */
function rememberCollectorCredentials(settings: OtlpSettings): void {
  for (const value of Object.values(settings.headers)) {
    rememberSecret(value);
    rememberSecret(/^(?:Bearer|Basic)\s+(\S+)$/i.exec(value)?.[1]);
  }
  if (!URL.canParse(settings.url)) return;
  const url = new URL(settings.url);
  rememberSecret(url.password);
  rememberSecret(decodeURIComponent(url.password));
  for (const value of url.searchParams.values()) rememberSecret(value);
}

/** A positive number of milliseconds from the environment, as a timer can hold it. */
function positiveMs(text: string | undefined): number | undefined {
  const n = Number(text);
  return text && Number.isFinite(n) && n > 0 ? timerDelay(n) : undefined;
}

export function startOtlpExporter(settings: OtlpSettings, log: Logger): OtlpExporter {
  rememberCollectorCredentials(settings);
  let queue: FinishedSpan[] = [];
  let sending: Promise<void> = Promise.resolve();
  /**
   * The spans lost since the last batch the collector took (failed batches, a full queue), and since when:
   * an outage is said once when it begins (a collector that is down must not flood the agent's log) and
   * once when a batch goes through again, so that a collector down at start and up a minute later is not
   * read as one that never took a span, and the next outage is said too.
   */
  let outage: { since: number; batches: number; spans: number } | undefined;
  const timer = setInterval(() => void flush(), settings.delayMs);
  timer.unref();

  const flush = (): Promise<void> => {
    if (queue.length === 0) return sending;
    const batch = queue;
    queue = [];
    sending = sending.then(() =>
      post(settings, encode(batch, settings.resource)).then(
        () => {
          if (!outage) return;
          const { since, batches, spans } = outage;
          outage = undefined;
          log.info(`traces: sent to ${settings.url} again, after ${batches} failed ${batches === 1 ? 'batch' : 'batches'} over ${Math.round((Date.now() - since) / 1000)} s (${spans} ${spans === 1 ? 'span' : 'spans'} lost)`);
        },
        (err: Error) => {
          if (!outage) log.warn(`traces could not be sent to ${settings.url}: ${err.message} (the spans are dropped; a line will say when traces are sent again)`);
          outage ??= { since: Date.now(), batches: 0, spans: 0 };
          outage.batches++;
          outage.spans += batch.length;
        },
      ),
    );
    return sending;
  };

  return {
    export(span) {
      if (queue.length >= MAX_QUEUE) {
        // Dropped, as a full batch processor does; counted with the outage that filled the queue.
        if (outage) outage.spans++;
        return;
      }
      queue.push(span);
      if (queue.length >= MAX_BATCH) void flush();
    },
    flush,
    async shutdown() {
      clearInterval(timer);
      await flush();
    },
  };
}

async function post(settings: OtlpSettings, body: string): Promise<void> {
  const url = new URL(settings.url);
  const send = url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'POST', headers: { ...settings.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: settings.timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode && res.statusCode < 300 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${settings.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The OTLP/JSON encoding: ids in hex, times as nanosecond strings, attributes as typed values. */
export function encode(spans: FinishedSpan[], resource: Record<string, string>): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: attributes(resource) },
        scopeSpans: [
          {
            scope: { name: 'forge' },
            spans: spans.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: KIND[s.kind],
              startTimeUnixNano: nanos(s.startTime),
              endTimeUnixNano: nanos(s.endTime),
              attributes: attributes(s.attributes),
              events: s.events.map((e) => ({ name: e.name, timeUnixNano: nanos(e.time), attributes: attributes(e.attributes ?? {}) })),
              status: { code: STATUS[s.status.code], ...(s.status.message ? { message: s.status.message } : {}) },
            })),
          },
        ],
      },
    ],
  });
}

function nanos(ms: number): string {
  return (BigInt(Math.floor(ms)) * 1_000_000n + BigInt(Math.round((ms % 1) * 1e6))).toString();
}

function attributes(record: Record<string, AttributeValue>) {
  return Object.entries(record).map(([key, value]) => ({ key, value: anyValue(value) }));
}

function anyValue(value: AttributeValue): Record<string, unknown> {
  if (Array.isArray(value)) return { arrayValue: { values: value.map((v) => ({ stringValue: v })) } };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return { stringValue: value };
}
