/** Colors and sizes for terminal output; plain text when not a TTY or when NO_COLOR is set. */
import { fstatSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';

type Colors = ReturnType<typeof import('picocolors').createColors>;

/** Every color a no-op: what picocolors gives when colors are off. */
const PLAIN = new Proxy({} as Colors, { get: (_, key) => (key === 'isColorSupported' ? false : String) });

// Before colorsFor runs below: /dev/null's device number, read once by nullDevice().
let nullRdev: number | undefined | null = null;

export const color = colorsFor(1);
export const errColor = colorsFor(2);

/**
 * Output to a pipe or a file gets plain text without loading anything:
 * node:tty (which loads net and streams), process.stdout (which creates the
 * stream) and picocolors (which reads process.stdout.isTTY) together cost a
 * cached build a third of its time over a bare node start.
 */
function colorsFor(fd: 1 | 2): Colors {
  if (process.env.NO_COLOR || !isTerminal(fd)) return PLAIN;
  const load = createRequire(import.meta.url);
  if (!(load('node:tty') as typeof import('node:tty')).isatty(fd)) return PLAIN;
  return (load('picocolors') as typeof import('picocolors')).createColors(true);
}

/**
 * A terminal is a character device; so is /dev/null (`forge build > /dev/null`), told apart here by
 * its device number rather than by node:tty, which would load net and streams to say so.
 */
function isTerminal(fd: number): boolean {
  try {
    const stats = fstatSync(fd);
    return stats.isCharacterDevice() && stats.rdev !== nullDevice();
  } catch {
    return false;
  }
}

/** /dev/null's device number, read once (stdout and stderr are both asked about at start-up). */
function nullDevice(): number | undefined {
  if (nullRdev === null) nullRdev = statSync('/dev/null', { throwIfNoEntry: false })?.rdev;
  return nullRdev;
}


export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(2)} MB`;
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}
