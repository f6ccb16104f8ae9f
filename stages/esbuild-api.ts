/**
 * esbuild's JavaScript API, loaded with require() on first use: esbuild
 * ships CommonJS, and importing it as an ES module makes Node scan its
 * source for export names first (~10 ms on every build). Evaluating it costs
 * about 8 ms, which commands that only import a module that can bundle
 * (`forge tool run` of a Python or YAML tool) do not pay.
 */
import { createRequire } from 'node:module';
import { lazyValue } from '../runtime/vendor/lazy-value.ts';

export const esbuild = lazyValue(() => createRequire(import.meta.url)('esbuild') as typeof import('esbuild'));

/** A banner that lets bundled CommonJS dependencies call require() in an ES module. */
export const REQUIRE_SHIM = "import { createRequire as __forgeCreateRequire } from 'node:module'; const require = __forgeCreateRequire(import.meta.url);";

/**
 * How a bundle's code is made: one ES module per entry for Node 20 and
 * later, minified, with the require() shim, kept in memory (the output
 * writer hashes and writes it). The runtime core takes these with a format
 * and banner of its own (CommonJS: runtime-core.ts's CORE_OPTIONS).
 */
export const BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  legalComments: 'eof',
  banner: { js: REQUIRE_SHIM },
  write: false,
  metafile: true,
  logLevel: 'silent',
} as const satisfies import('esbuild').BuildOptions;

/**
 * Evaluates esbuild's API now. A build does so first thing, before the
 * project loads, as it did when the API loaded with this module: evaluated
 * at discovery instead, just before the service starts, the cold build of
 * the 200-tool project took 17 ms longer (A/B, 11 rounds: 223 → 240 ms).
 */
export function loadEsbuild(): void {
  void esbuild.version;
}

/**
 * Starts esbuild's service process now, so that its start overlaps with
 * loading the project instead of delaying the bundle stage.
 */
export function warmUpEsbuild(): void {
  esbuild.transform('', {}).catch(() => {});
}
