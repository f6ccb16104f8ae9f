// Compiles the `forge` command to dist/ (run by `npm install` through the
// prepare script). The installed command runs this JavaScript, never
// TypeScript through a loader: that would cost several times a node start.
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

/**
 * node:module behind a stand-in in the fast path's file: its createRequire
 * requires node:module on first call. On Node 20 the first require of
 * node:module evaluates the ES module loader behind it, half a millisecond
 * of a cached build that never calls createRequire. A new import from
 * node:module in the fast path fails this build until it is added here.
 */
const lazyNodeModule = {
  name: 'forge-fast-lazy-node-module',
  setup(build) {
    // The stand-in's own require is Node's.
    build.onResolve({ filter: /^node:module$/ }, (args) =>
      args.namespace === 'forge-fast-node-module' ? { path: 'node:module', external: true } : { path: 'node:module', namespace: 'forge-fast-node-module' },
    );
    build.onLoad({ filter: /.*/, namespace: 'forge-fast-node-module' }, () => ({
      contents: "export const createRequire = (...args) => require('node:module').createRequire(...args);",
      loader: 'js',
    }));
  },
};

/**
 * Two CommonJS files for Node 20 and later, each finding Forge's root from
 * its own place in dist/ (forge-paths.ts), import() of node: modules made
 * require():
 *
 *   forge-fast.cjs (cli/fast-path.ts), which bin/forge.cjs loads first: it
 *   answers a cached build and --version, and otherwise runs
 *
 *   forge-cli.cjs, the whole CLI in one file, compiled with V8's code cache
 *   (runtime/code-cache.ts). Node 20 keeps no compiled code for ES modules, and
 *   its ES module loader costs a resolve, a read and a link per chunk: one
 *   script with a code cache starts a command in about a sixth less time.
 *   Commands and heavy parts still evaluate only when first used (esbuild
 *   wraps what is loaded with import() in lazy initializers).
 */
const COMMONJS = {
  absWorkingDir: root,
  plugins: [lazyVendor],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  supported: { 'dynamic-import': false },
  // import.meta.url on first read: building the URL costs a cached build half a millisecond, and
  // what it runs (forge-paths.ts's root, a crypto require) rarely reads it.
  define: { 'import.meta.url': '__forgeModule.url' },
  banner: { js: "const __forgeModule = { get url() { return (this.href ??= require('node:url').pathToFileURL(__filename).href); } };" },
  legalComments: 'none',
  // Smaller files parse faster at every start; names stay readable in --verbose stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
};
await Promise.all([
  // esbuild finds its native binary relative to its own package.
  esbuild.build({ ...COMMONJS, entryPoints: ['cli/forge.ts'], outfile: 'dist/forge-cli.cjs', external: ['esbuild', './runtime-vendor/*'] }),
  esbuild.build({ ...COMMONJS, plugins: [...COMMONJS.plugins, lazyNodeModule], entryPoints: ['cli/fast-path.ts'], outfile: 'dist/forge-fast.cjs', external: ['./runtime-vendor/*'] }),
]);
