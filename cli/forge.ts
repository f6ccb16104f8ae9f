/** The `forge` executable's entry point (compiled to dist/forge-cli.cjs, which bin/forge.cjs runs). */
import { main } from './main.ts';
import { exitQuietlyOnClosedPipe } from '../runtime/closed-pipe.ts';

exitQuietlyOnClosedPipe();

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`forge: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
