// Compiles the `forge` command to dist/ (run by `npm install` through the
// prepare script). The installed command runs this JavaScript, never
// TypeScript through a loader: that would cost several times a node start.
// Commands are split into chunks so each loads only what it uses.
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await import('./generate-validators.mjs');
rmSync(join(root, 'dist'), { recursive: true, force: true });
await import('./build-vendor.mjs');
await import('./build-studio.mjs');
/**
 * ajv and the small libraries behind lazy stand-ins (runtime/vendor/lazy-value.ts)
 * that require the prebuilt copy (dist/runtime-vendor/) on first use: most
 * commands (a cached build, `tool list`) never validate a schema, match a
 * glob or parse a cron line, and should not evaluate those libraries.
 */
const lazyVendor = {
  name: 'forge-cli-lazy-vendor',
  setup(build) {
    build.onResolve({ filter: /[\\/]vendor[\\/](ajv|libs)\.ts$/ }, (args) => ({ path: join(args.resolveDir, args.path), namespace: 'forge-cli-vendor' }));
    build.onLoad({ filter: /.*/, namespace: 'forge-cli-vendor' }, (args) => {
      const name = args.path.match(/(ajv|libs)\.ts$/)[1];
      const { exports, kinds } = JSON.parse(readFileSync(join(root, 'dist', 'runtime-vendor', `${name}.json`), 'utf8'));
      if (!exports.every((e) => kinds[e] === 'function' || kinds[e] === 'object')) return undefined;
      // `require` is the chunk's own (the banner), resolving beside dist/'s files.
      const stands = exports.map((e) => `export const ${e} = lazyValue(() => require('./runtime-vendor/${name}.cjs').${e});`);
      return { contents: [`import { lazyValue } from ${JSON.stringify(join(root, 'runtime', 'vendor', 'lazy-value.ts'))};`, ...stands].join('\n'), loader: 'js', resolveDir: root };
    });
  },
};

await esbuild.build({
  absWorkingDir: root,
  entryPoints: { forge: 'cli/forge.ts' },
  plugins: [lazyVendor],
  outdir: 'dist',
  chunkNames: 'forge-[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // esbuild finds its native binary relative to its own package.
  external: ['esbuild', './runtime-vendor/*'],
  banner: { js: "import { createRequire as __forgeCreateRequire } from 'node:module'; const require = __forgeCreateRequire(import.meta.url);" },
  legalComments: 'none',
  // Smaller files parse faster at every start; names stay readable in --verbose stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
});

// The fast path (cli/fast-path.ts): one CommonJS file with no chunks, which
// bin/forge.cjs loads before anything else. It answers a cached build and
// --version; every other command goes on to dist/forge.js.
await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['cli/fast-path.ts'],
  outfile: 'dist/forge-fast.cjs',
  plugins: [lazyVendor],
  external: ['./runtime-vendor/*'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // forge-paths.ts finds Forge's root from its own URL, one level below it as in dist/.
  define: { 'import.meta.url': '__forgeFileUrl' },
  banner: { js: "const __forgeFileUrl = require('node:url').pathToFileURL(__filename).href;" },
  legalComments: 'none',
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
});
