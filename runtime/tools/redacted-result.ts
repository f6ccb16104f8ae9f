/**
 * A tool's result with every secret the runtime holds masked (known-secrets.ts:
 * model keys, the agent token, adapter credentials). A result carries what
 * others wrote — an API's error body, a server's stderr, a program's output —
 * and one that quotes a credential back (a 401 echoing the Authorization
 * header, a tool printing its environment) would hand it to the model, and
 * from there to every client, log, trace and the studio. The registry masks
 * each result once, before anyone sees it.
 */
import { knowsSecrets, redactSecrets } from '../known-secrets.ts';
import type { ToolError, ToolResult } from './model.ts';

/** Past this depth a value is masked through its JSON text, not walked (a deep value must not overflow the stack). */
const MAX_WALK_DEPTH = 64;

export function redactedResult(result: ToolResult): ToolResult {
  if (!knowsSecrets()) return result;
  if (result.ok) {
    const value = redactedValue(result.value, 0);
    return value === result.value ? result : { ...result, value };
  }
  const error = redactedError(result.error);
  return error === result.error ? result : { ...result, error };
}

function redactedError(error: ToolError): ToolError {
  const message = redactSecrets(error.message);
  const hint = error.hint === undefined ? undefined : redactSecrets(error.hint);
  const details = error.details === undefined ? undefined : redactSecrets(error.details);
  if (message === error.message && hint === error.hint && details === error.details) return error;
  return { ...error, message, ...(hint === undefined ? {} : { hint }), ...(details === undefined ? {} : { details }) };
}

/** `value` itself when it holds no secret; else a copy with them masked (keys too). */
function redactedValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_WALK_DEPTH) return redactedByText(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const masked = redactedValue(item, depth + 1);
      if (masked !== item) (copy ??= [...value])[i] = masked;
    });
    return copy ?? value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return redactedByText(value);
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const maskedKey = redactSecrets(key);
    const masked = redactedValue(item, depth + 1);
    if (maskedKey === key && masked === item) continue;
    copy ??= { ...value };
    if (maskedKey !== key) delete copy[key];
    copy[maskedKey] = masked;
  }
  return copy ?? value;
}

/** A value not walked (too deep, or not plain data): unchanged when its JSON text holds no secret, else that text masked and read back. */
function redactedByText(value: object): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return value; // not JSON (a cycle): no one can send it on as text either
  }
  if (text === undefined) return value;
  const masked = redactSecrets(text);
  if (masked === text) return value;
  try {
    return JSON.parse(masked);
  } catch {
    return masked;
  }
}
