// Prebuilds runtime/vendor/protocol.ts (the MCP and A2A SDKs) into one
// CommonJS text that the build splices into runtime.mjs, so that esbuild
// does not parse the SDKs again on every `forge build`. Run by
// scripts/build-cli.mjs (npm install's prepare) and before the tests.
import { mkdirSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'dist', 'runtime-vendor');
mkdirSync(outDir, { recursive: true });
const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['runtime/vendor/protocol.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  legalComments: 'eof',
  write: false,
  logLevel: 'error',
});
const code = result.outputFiles[0].text;
const file = join(outDir, 'protocol.cjs');
writeFileSync(file, code);
// The names it exports, read from the module itself: the build re-exports exactly these.
const names = Object.keys(createRequire(import.meta.url)(file)).filter((n) => n !== '__esModule').sort();
writeFileSync(join(outDir, 'protocol.json'), JSON.stringify({ exports: names }) + '\n');

// The `pg` client the same way, compressed: only a process that opens a
// Postgres state store inflates and evaluates it (stages/pg-splice.ts).
const pgResult = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['runtime/state/pg-client.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  legalComments: 'eof',
  external: ['pg-native'],
  write: false,
  logLevel: 'error',
});
writeFileSync(join(outDir, 'pg.cjs.gz'), gzipSync(Buffer.from(pgResult.outputFiles[0].text), { level: 9 }));
