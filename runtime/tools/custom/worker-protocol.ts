/**
 * The worker wire protocol: one JSON object per line each way, requests on
 * the worker's stdin, answers on its file descriptor 3 (PROTOCOL_FD). Its
 * stdout is the tool's like stderr is, logged: a tool's print, a write to
 * fd 1 or a child process that inherits stdout can neither corrupt nor
 * forge an answer.
 *
 *   → {"id": 1, "args": {...}, "tmpDir": "/tmp/forge-x-1f3a", "depth": 0}
 *   ← {"id": 1, "ok": true, "value": ...}
 *   ← {"id": 1, "ok": false, "error": {"type": "ValueError", "message": "...", "traceback": "..."}}
 *
 * While request 1 runs, a composed tool may call other tools through the
 * host (which runs them through the caller's scoped registry, under the
 * approval policy, and answers):
 *
 *   ← {"id": 1, "call": 7, "tool": "file_read", "args": {...}}
 *   → {"id": 1, "reply": 7, "result": {"ok": true, "value": ...}}
 *
 * `tmpDir` is a fresh path the tool may create for this call (the host
 * removes it afterwards). A worker that cannot load its tool answers the
 * first request with `"fatal": true` and exits; the next call starts a
 * fresh worker.
 */
import type { ToolResult } from '../model.ts';

/** The descriptor a worker writes its answers to. */
export const PROTOCOL_FD = 3;

export interface WorkerRequest {
  id: number;
  args: unknown;
  tmpDir?: string;
  depth?: number;
}

export interface WorkerFailure {
  type?: string;
  message: string;
  traceback?: string;
}

export type WorkerResponse =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WorkerFailure; fatal?: boolean };

/** A sub-tool call from the worker to the host, during request `id`. */
export interface WorkerToolCall {
  id: number;
  call: number;
  tool: string;
  args: unknown;
}

export interface WorkerToolReply {
  id: number;
  reply: number;
  result: ToolResult;
}
