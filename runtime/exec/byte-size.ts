/**
 * A size written with its unit — "512MB", "1GiB", "256k" — in bytes, for
 * forge.yaml's `sandbox.memory`. Decimal and binary units both mean powers
 * of 1024 here (a memory cap, not a disk size); a bare number is bytes.
 */
const UNIT: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

export function parseByteSize(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value > 0 ? value : undefined;
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(value.trim());
  if (!m) return undefined;
  const bytes = Math.round(Number(m[1]) * UNIT[m[2].toLowerCase()]);
  return bytes > 0 ? bytes : undefined;
}

export function formatByteSize(bytes: number): string {
  for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (bytes >= size && bytes % (size / 8) === 0) return `${+(bytes / size).toFixed(3)} ${unit}`;
  }
  return `${bytes} B`;
}
