/**
 * The running agent's recent tool calls, kept in a fixed-size ring fed by
 * the registry's onCall listener, and the introspection handle that
 * debug_console reads them (and the tools and config) through.
 */
import type { DiagnosticCode } from '../diagnostic-codes.ts';
import type { CallEvent } from './registry.ts';
import type { ToolSpec } from './model.ts';

export interface CallRecord {
  name: string;
  /** When the call finished (ISO 8601). */
  at: string;
  durationMs: number;
  ok: boolean;
  /** Composition depth: 0 for a call from the agent, 1+ for a tool called by a tool. */
  depth: number;
  /** The arguments as JSON, cut to ARGS_PREVIEW_CHARS. */
  args: string;
  error?: { code: DiagnosticCode; message: string };
  /** The session the call came from: each session is shown its own calls only. */
  session?: string;
}

export interface AgentIntrospection {
  /** The tools a caller in `session` can call (undefined: one without a session). */
  tools(session: string | undefined): ToolSpec[];
  /** Most recent first. */
  recentCalls(): CallRecord[];
  config(): unknown;
}

export const DEFAULT_CALL_LOG_SIZE = 200;
const ARGS_PREVIEW_CHARS = 300;

export class CallLog {
  private readonly ring: CallRecord[] = [];
  private next = 0;

  constructor(readonly capacity = DEFAULT_CALL_LOG_SIZE) {}

  record(event: CallEvent, now = new Date()): void {
    const record: CallRecord = {
      name: event.name,
      at: now.toISOString(),
      durationMs: Math.round(event.durationMs * 100) / 100,
      ok: event.result.ok,
      depth: event.depth,
      args: preview(event.args),
      ...(event.session ? { session: event.session } : {}),
    };
    if (!event.result.ok) record.error = { code: event.result.error.code, message: event.result.error.message };
    if (this.ring.length < this.capacity) this.ring.push(record);
    else this.ring[this.next] = record;
    this.next = (this.next + 1) % this.capacity;
  }

  /** Most recent first. */
  list(): CallRecord[] {
    const ordered = this.ring.length < this.capacity ? [...this.ring] : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
    return ordered.reverse();
  }
}

function preview(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args) ?? 'undefined';
  } catch {
    text = String(args);
  }
  return text.length > ARGS_PREVIEW_CHARS ? `${text.slice(0, ARGS_PREVIEW_CHARS)}…` : text;
}
