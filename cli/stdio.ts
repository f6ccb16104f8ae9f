/** Writing to stdout and stderr when the reader may go away or fall behind. */
import { writeSync } from 'node:fs';
import { exitQuietlyOnClosedPipe } from '../runtime/closed-pipe.ts';

/**
 * Writes to fd 1 without creating process.stdout: setting that stream up on
 * a pipe costs about as much as a cached build's whole check. A full pipe
 * (EAGAIN) takes the rest through process.stdout, which waits for the
 * reader; a closed one (EPIPE) ends the process quietly.
 */
export function writeStdoutSync(text: string): void {
  const bytes = Buffer.from(text);
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EPIPE') process.exit(process.exitCode ?? 0);
    if (code !== 'EAGAIN') throw err;
    exitQuietlyOnClosedPipe();
    process.stdout.write(bytes.subarray(written));
  }
}
