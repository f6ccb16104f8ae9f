/**
 * `forge tool list | head` or `node runtime.mjs tools | head` closes our
 * stdout before we are done writing; that is not an error. Without a
 * listener, the next write's EPIPE is an unhandled 'error' event: a stack
 * trace and exit 1. With one, the process ends with the exit code it had.
 */
export function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
}
