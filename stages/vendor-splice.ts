/**
 * The prebuilt protocol SDKs (scripts/build-vendor.mjs) in a build: an
 * esbuild plugin stands a tiny module in for runtime/vendor/protocol.ts
 * that reads the SDKs from a function, and the prebuilt text is spliced
 * into runtime.mjs as that function — evaluated on first use, parsed by
 * esbuild never. Without a prebuilt copy (a checkout that skipped
 * `npm install`'s prepare) the SDKs are bundled from source as usual.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { forgeRoot, runtimeDir } from './forge-paths.ts';

const VENDOR_DIR = join(forgeRoot, 'dist', 'runtime-vendor');
const MODULE = join(runtimeDir, 'vendor', 'protocol.ts');
const LOADER = '__forgeProtocol';

export interface VendorSplice {
  plugin: Plugin;
  /** The prebuilt files (inputs of the build cache). */
  files: string[];
  /** Inserts the SDKs into runtime.mjs's text, if the bundle uses them. */
  splice(runtimeText: string): string;
}

export function vendorSplice(): VendorSplice | undefined {
  const code = join(VENDOR_DIR, 'protocol.cjs');
  const names = join(VENDOR_DIR, 'protocol.json');
  if (!existsSync(code) || !existsSync(names)) return undefined;
  const { exports } = JSON.parse(readFileSync(names, 'utf8')) as { exports: string[] };
  let used = false;
  return {
    files: [code, names],
    plugin: {
      name: 'forge-vendor',
      setup(build) {
        build.onResolve({ filter: /[\\/]vendor[\\/]protocol\.ts$/ }, (args) => {
          const path = join(args.resolveDir, args.path);
          return path === MODULE ? { path, namespace: 'forge-vendor' } : undefined;
        });
        build.onLoad({ filter: /.*/, namespace: 'forge-vendor' }, () => {
          used = true;
          return { contents: `export const { ${exports.join(', ')} } = ${LOADER}();\n`, loader: 'js' };
        });
      },
    },
    splice(runtimeText) {
      if (!used) return runtimeText;
      const cjs = readFileSync(code, 'utf8');
      const loader = `var ${LOADER}Cache;function ${LOADER}(){return ${LOADER}Cache??=(function(){var module={exports:{}},exports=module.exports;\n${cjs}\nreturn module.exports})()}\n`;
      // After the first line (the require() shim the SDKs need), before the bundle.
      const firstLineEnd = runtimeText.indexOf('\n') + 1;
      return runtimeText.slice(0, firstLineEnd) + loader + runtimeText.slice(firstLineEnd);
    },
  };
}
