/** Colors and sizes for terminal output; plain text when not a TTY or when NO_COLOR is set. */
import pc from 'picocolors';

export const color = pc.createColors(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);
export const errColor = pc.createColors(Boolean(process.stderr.isTTY) && !process.env.NO_COLOR);

export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(2)} MB`;
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}
