/** Whether `value` is an object with string keys: not null, not an array (what JSON calls an object). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
