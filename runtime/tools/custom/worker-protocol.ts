/**
 * The worker wire protocol: one JSON object per line each way.
 *
 *   → {"id": 1, "args": {...}}
 *   ← {"id": 1, "ok": true, "value": ...}
 *   ← {"id": 1, "ok": false, "error": {"type": "ValueError", "message": "...", "traceback": "..."}}
 *
 * A worker that cannot load its tool answers the first request with
 * `"fatal": true` and exits; the next call starts a fresh worker.
 */

export interface WorkerRequest {
  id: number;
  args: unknown;
}

export interface WorkerFailure {
  type?: string;
  message: string;
  traceback?: string;
}

export type WorkerResponse =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WorkerFailure; fatal?: boolean };
