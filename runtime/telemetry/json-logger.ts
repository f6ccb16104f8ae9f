/**
 * Log lines for machines (`--log-format json`): one JSON object per line,
 * with the time, the level, the message, and the trace and span ids of the
 * work that logged it (when tracing is on), so a log search and a trace
 * viewer point at each other. The message is masked as a text line is
 * (log-text.ts): outside text in it may quote a secret the runtime holds.
 */
import { redactSecrets } from '../known-secrets.ts';
import type { Logger } from '../tools/model.ts';
import { activeSpan } from './tracer.ts';

export type LogFormat = 'text' | 'json';

export function parseLogFormat(value: string | undefined): LogFormat | undefined {
  return value === 'json' || value === 'text' ? value : undefined;
}

/**
 * A JSON logger also writes `error` lines: a command's own failures (a port in use, a bad setting);
 * and `shown` lines, info lines written as they are: what the server shows the person on purpose,
 * a token it generated or the studio link that carries it, which masking would make useless.
 */
export type JsonLogger = Logger & { error(message: string, about?: CodedProblem): void; shown(message: string): void };

/** An error line's code and hint as fields of their own, so a log pipeline can alert on FORGE_LISTEN without parsing the message. */
export interface CodedProblem {
  code: string;
  hint?: string;
}

export function jsonLogger(write: (line: string) => void, options: { verbose?: boolean; fields?: Record<string, string> } = {}): JsonLogger {
  const line = (level: string, msg: string, masked = true, about?: CodedProblem) => {
    const span = activeSpan();
    const coded = about ? { code: about.code, ...(about.hint ? { hint: redactSecrets(about.hint) } : {}) } : {};
    const record: Record<string, unknown> = { time: new Date().toISOString(), level, msg: masked ? redactSecrets(msg) : msg, ...coded, ...options.fields };
    if (span?.recording) {
      record.trace_id = span.context.traceId;
      record.span_id = span.context.spanId;
    }
    write(JSON.stringify(record) + '\n');
  };
  return {
    debug: (m) => options.verbose && line('debug', m),
    info: (m) => line('info', m),
    warn: (m) => line('warn', m),
    error: (m, about) => line('error', m, true, about),
    shown: (m) => line('info', m, false),
  };
}
