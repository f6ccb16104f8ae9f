/**
 * The prebuilt third-party code (scripts/build-vendor.mjs: the protocol
 * SDKs, ajv, the small libraries, the YAML parser) in a build: an esbuild
 * plugin stands a tiny module in for each runtime/vendor/<name>.ts that
 * reads its values from a function, and the prebuilt text is spliced into
 * runtime.mjs as that function — evaluated on first use, parsed by esbuild
 * never. Only the modules the bundle imports are spliced. Without a
 * prebuilt copy (a checkout that skipped `npm install`'s prepare) the
 * packages are bundled from source as usual.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { forgeRoot, runtimeDir } from './forge-paths.ts';

const VENDOR_DIR = join(forgeRoot, 'dist', 'runtime-vendor');
/** Keep in step with scripts/build-vendor.mjs. */
const VENDOR_MODULES = ['protocol', 'ajv', 'libs', 'yaml'];

export interface VendorSplice {
  plugin: Plugin;
  /** The prebuilt files (inputs of the build cache). */
  files: string[];
  /** Inserts the prebuilt modules the bundle uses into runtime.mjs's text. */
  splice(runtimeText: string): string;
}

interface Prebuilt {
  name: string;
  code: string;
  exports: string[];
  loader: string;
}

export function vendorSplice(): VendorSplice | undefined {
  const prebuilt = new Map<string, Prebuilt>();
  for (const name of VENDOR_MODULES) {
    const code = join(VENDOR_DIR, `${name}.cjs`);
    const names = join(VENDOR_DIR, `${name}.json`);
    if (!existsSync(code) || !existsSync(names)) continue;
    const { exports } = JSON.parse(readFileSync(names, 'utf8')) as { exports: string[] };
    prebuilt.set(join(runtimeDir, 'vendor', `${name}.ts`), { name, code, exports, loader: name === 'protocol' ? '__forgeProtocol' : `__forgeVendor_${name}` });
  }
  if (prebuilt.size === 0) return undefined;
  const used = new Set<Prebuilt>();
  return {
    files: [...prebuilt.values()].flatMap((p) => [p.code, p.code.replace(/\.cjs$/, '.json')]),
    plugin: {
      name: 'forge-vendor',
      setup(build) {
        build.onResolve({ filter: /[\\/]vendor[\\/]\w+\.ts$/ }, (args) => {
          const path = join(args.resolveDir, args.path);
          return prebuilt.has(path) ? { path, namespace: 'forge-vendor' } : undefined;
        });
        build.onLoad({ filter: /.*/, namespace: 'forge-vendor' }, (args) => {
          const module = prebuilt.get(args.path)!;
          used.add(module);
          return { contents: `export const { ${module.exports.join(', ')} } = ${module.loader}();\n`, loader: 'js' };
        });
      },
    },
    splice(runtimeText) {
      if (used.size === 0) return runtimeText;
      const loaders = [...used]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map(({ code, loader }) => `var ${loader}Cache;function ${loader}(){return ${loader}Cache??=(function(){var module={exports:{}},exports=module.exports;\n${readFileSync(code, 'utf8')}\nreturn module.exports})()}\n`)
        .join('');
      // After the first line (the require() shim the packages need), before the bundle.
      const firstLineEnd = runtimeText.indexOf('\n') + 1;
      return runtimeText.slice(0, firstLineEnd) + loaders + runtimeText.slice(firstLineEnd);
    },
  };
}
