/** The `forge` executable's entry point (compiled to dist/forge.js). */
import { main } from './main.ts';

// `forge tool list | head` closes our stdout early; that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`forge: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
