/**
 * The prebuilt third-party code (scripts/build-vendor.mjs: the protocol
 * SDKs, ajv, the small libraries, the YAML parser) in a build: an esbuild
 * plugin stands a tiny module in for each runtime/vendor/<name>.ts that
 * reads its values from a function, and each prebuilt module the bundle
 * imports is written beside runtime.mjs as vendor/<name>.cjs, which that
 * function reads and compiles on first use: parsed by esbuild never, and by
 * V8 only when a process needs it. Kept out of runtime.mjs, they cost a
 * start nothing (as strings inside it, their 700 kB were most of what V8
 * scanned to load it). runtime.mjs carries each file's sha256 and compiles
 * only bytes that match, so a vendor file changed after the start-time
 * check is refused, not run. Without a prebuilt copy (a checkout that
 * skipped `npm install`'s prepare) the packages are bundled from source as
 * usual.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { forgeRoot, runtimeDir } from './forge-paths.ts';

const VENDOR_DIR = join(forgeRoot, 'dist', 'runtime-vendor');
/** Keep in step with scripts/build-vendor.mjs. */
const VENDOR_MODULES = ['protocol', 'ajv', 'libs', 'yaml'];
/**
 * Modules evaluated on first USE rather than when the bundle loads: their
 * exports are functions, classes and objects, so each name can be a proxy
 * that loads the module when it is first called, constructed or read. A
 * serving agent validates its first call after it answers /healthz, and
 * most starts never match an approval glob or parse a cron line: evaluating
 * ajv and the small libraries at load was a sixth of the start-up.
 * (The protocol SDKs are imported dynamically already; YAML tools need the
 * parser while the runtime is assembled.)
 */
const LAZY_MODULES = new Set(['ajv', 'libs']);
const LAZY_VALUE = join(runtimeDir, 'vendor', 'lazy-value.ts');

export interface VendorSplice {
  plugin: Plugin;
  /** The prebuilt files (inputs of the build cache). */
  files: string[];
  /** Inserts the loaders of the prebuilt modules the bundle uses into runtime.mjs's text. */
  splice(runtimeText: string): string;
  /** The prebuilt modules the bundle uses, as files of the output (after splice). */
  outputs(): { path: string; contents: Buffer }[];
}

/** Where a bundle's prebuilt modules are, relative to runtime.mjs (verify-bundle.ts checks the same folder). */
const BUNDLE_VENDOR_DIR = 'vendor';

interface Prebuilt {
  name: string;
  code: string;
  exports: string[];
  loader: string;
  lazy: boolean;
}

export function vendorSplice(): VendorSplice | undefined {
  const prebuilt = new Map<string, Prebuilt>();
  for (const name of VENDOR_MODULES) {
    const code = join(VENDOR_DIR, `${name}.cjs`);
    const names = join(VENDOR_DIR, `${name}.json`);
    if (!existsSync(code) || !existsSync(names)) continue;
    const { exports, kinds = {} } = JSON.parse(readFileSync(names, 'utf8')) as { exports: string[]; kinds?: Record<string, string> };
    const lazy = LAZY_MODULES.has(name) && exports.every((e) => kinds[e] === 'function' || kinds[e] === 'object');
    prebuilt.set(join(runtimeDir, 'vendor', `${name}.ts`), { name, code, exports, lazy, loader: name === 'protocol' ? '__forgeProtocol' : `__forgeVendor_${name}` });
  }
  if (prebuilt.size === 0) return undefined;
  const used = new Set<Prebuilt>();
  // What splice() put beside runtime.mjs: the very bytes whose hashes it wrote into it.
  let written: { path: string; contents: Buffer }[] = [];
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
          if (module.lazy) {
            const stands = module.exports.map((e) => `export const ${e} = lazyValue(() => ${module.loader}().${e});\n`);
            return { contents: `import { lazyValue } from ${JSON.stringify(LAZY_VALUE)};\n${stands.join('')}`, loader: 'js', resolveDir: runtimeDir };
          }
          return { contents: `export const { ${module.exports.join(', ')} } = ${module.loader}();\n`, loader: 'js' };
        });
      },
    },
    splice(runtimeText) {
      if (used.size === 0) return runtimeText;
      const modules = [...used].sort((a, b) => (a.name < b.name ? -1 : 1)).map((module) => ({ ...module, contents: readFileSync(module.code) }));
      written = modules.map(({ name, contents }) => ({ path: `${BUNDLE_VENDOR_DIR}/${name}.cjs`, contents }));
      // `require` is the bundle's shim; the code is compiled from the very bytes that were hashed.
      const loaders =
        `function __forgeVendorFile(path,sha256){var file=require("node:url").fileURLToPath(new URL(path,import.meta.url)),code;` +
        `function tampered(what){return Object.assign(new Error(path.slice(2)+" "+what),{code:"FORGE_BUNDLE_TAMPERED",hint:"deploy the whole build output (forge build writes vendor/ beside runtime.mjs), or rebuild"})}` +
        `try{code=require("node:fs").readFileSync(file)}catch(e){throw tampered("is missing beside runtime.mjs ("+e.code+")")}` +
        `if(require("node:crypto").createHash("sha256").update(code).digest("hex")!==sha256)throw tampered("was changed after the build (its sha256 is not the one runtime.mjs was built with)");` +
        `var module={exports:{}};new Function("module","exports","require",code.toString("utf8"))(module,module.exports,require);return module.exports}\n` +
        modules.map(({ name, loader, contents }) => `var ${loader}Cache;function ${loader}(){return ${loader}Cache??=__forgeVendorFile(${JSON.stringify(`./${BUNDLE_VENDOR_DIR}/${name}.cjs`)},${JSON.stringify(sha256(contents))})}\n`).join('');
      // After the first line (the require() shim the packages need), before the bundle.
      const firstLineEnd = runtimeText.indexOf('\n') + 1;
      return runtimeText.slice(0, firstLineEnd) + loaders + runtimeText.slice(firstLineEnd);
    },
    outputs() {
      return written;
    },
  };
}

function sha256(contents: Buffer): string {
  return createHash('sha256').update(contents).digest('hex');
}
