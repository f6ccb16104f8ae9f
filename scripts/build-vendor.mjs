// Prebuilds the third-party code the runtime uses, behind the modules in
// runtime/vendor/ (the MCP and A2A SDKs, ajv, the small libraries, the YAML
// parser), each into one CommonJS file that the build copies beside
// runtime.mjs (vendor/), so that esbuild does not parse those packages again
// on every `forge build`. Run by scripts/build-cli.mjs (npm install's prepare) and
// before the tests.
import { mkdirSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'dist', 'runtime-vendor');
mkdirSync(outDir, { recursive: true });
// Keep in step with VENDOR_MODULES in stages/vendor-modules.ts.
const modules = ['mcp', 'a2a', 'ajv', 'libs', 'yaml'];
/** One CommonJS text, minified, kept in memory (written below). */
const prebuild = (entry, extra = {}) =>
  esbuild.build({ absWorkingDir: root, entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', target: 'node20', minify: true, legalComments: 'eof', write: false, logLevel: 'error', ...extra });
const results = await Promise.all(modules.map((name) => prebuild(`runtime/vendor/${name}.ts`)));
const require = createRequire(import.meta.url);
for (const [i, name] of modules.entries()) {
  const file = join(outDir, `${name}.cjs`);
  writeFileSync(file, results[i].outputFiles[0].text);
  // The names it exports, read from the module itself: the build re-exports exactly these.
  const loaded = require(file);
  const names = Object.keys(loaded).filter((n) => n !== '__esModule').sort();
  // And what each is: the build may stand a lazy proxy in only for functions and objects.
  const kinds = Object.fromEntries(names.map((n) => [n, loaded[n] === null ? 'null' : typeof loaded[n]]));
  writeFileSync(join(outDir, `${name}.json`), JSON.stringify({ exports: names, kinds }) + '\n');
}

// The `pg` client the same way, compressed: only a process that opens a
// Postgres state store inflates and evaluates it (stages/pg-splice.ts).
const pgResult = await prebuild('runtime/state/pg-client.ts', { external: ['pg-native'] });
writeFileSync(join(outDir, 'pg.cjs.gz'), gzipSync(Buffer.from(pgResult.outputFiles[0].text), { level: 9 }));
