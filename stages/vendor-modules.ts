/**
 * The prebuilt third-party code (scripts/build-vendor.mjs: the protocol
 * SDKs, ajv, the small libraries, the YAML parser) in a build: an esbuild
 * plugin stands a tiny module in for each runtime/vendor/<name>.ts, whose
 * values come from the prebuilt file, copied into the bundle as
 * vendor/<name>.cjs and evaluated on first use (runtime/vendor/vendor-file.ts):
 * parsed by esbuild never, and by V8 only when a process needs it. Kept out
 * of the runtime core, they cost a start nothing (as strings inside it, their
 * 700 kB were most of what V8 scanned to load it). Each stand-in carries its
 * file's sha256, and only matching bytes are compiled. Without a prebuilt
 * copy (a checkout that skipped `npm install`'s prepare) the packages are
 * bundled from source as usual.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { forgeRoot, runtimeDir } from './forge-paths.ts';

const VENDOR_DIR = join(forgeRoot, 'dist', 'runtime-vendor');
/** Keep in step with scripts/build-vendor.mjs. */
const VENDOR_MODULES = ['mcp', 'a2a', 'ajv', 'libs', 'yaml'];
/**
 * Modules evaluated on first USE rather than when the bundle loads: their
 * exports are functions, classes and objects, so each name can be a proxy
 * that loads the module when it is first called, constructed or read. A
 * serving agent validates its first call after it answers /healthz, and
 * most starts never match an approval glob or parse a cron line: evaluating
 * ajv and the small libraries at load was a sixth of the start-up. The YAML
 * parser is read when the runtime is assembled with YAML tools, but a TS
 * tool's worker and `help` never parse YAML, and evaluating it cost a
 * worker's start about 11 ms. (The protocol SDKs are imported only where
 * they are used: see runtime/vendor/mcp.ts; stateless MCP needs only the
 * protocol versions, which runtime/vendor/mcp-versions.ts holds as values.)
 */
const LAZY_MODULES = new Set(['ajv', 'libs', 'yaml']);
const LAZY_VALUE = join(runtimeDir, 'vendor', 'lazy-value.ts');

export interface VendorModules {
  plugin: Plugin;
  /** The prebuilt files (inputs of the build cache). */
  files: string[];
  /** The prebuilt modules the bundle imports, as files of the output (after the build), with the file each is copied from. */
  outputs(): { path: string; contents: Buffer; source: string }[];
}

/** Where a bundle's prebuilt modules are, relative to runtime.mjs (verify-bundle.ts checks the same folder). */
const BUNDLE_VENDOR_DIR = 'vendor';
const VENDOR_FILE = join(runtimeDir, 'vendor', 'vendor-file.ts');

interface Prebuilt {
  name: string;
  code: string;
  exports: string[];
  lazy: boolean;
  /** The file's bytes, read once: the output gets exactly what was hashed. */
  contents?: Buffer;
}

export function vendorModules(): VendorModules | undefined {
  const prebuilt = new Map<string, Prebuilt>();
  for (const name of VENDOR_MODULES) {
    const code = join(VENDOR_DIR, `${name}.cjs`);
    const names = join(VENDOR_DIR, `${name}.json`);
    if (!existsSync(names)) continue;
    if (!existsSync(code)) continue;
    const { exports, kinds = {} } = JSON.parse(readFileSync(names, 'utf8')) as { exports: string[]; kinds?: Record<string, string> };
    const lazy = LAZY_MODULES.has(name) && exports.every((e) => kinds[e] === 'function' || kinds[e] === 'object');
    prebuilt.set(join(runtimeDir, 'vendor', `${name}.ts`), { name, code, exports, lazy });
  }
  if (prebuilt.size === 0) return undefined;
  const used = new Set<Prebuilt>();
  return {
    files: [...prebuilt.values()].flatMap((p) => [p.code, p.code.replace(/\.cjs$/, '.json')]),
    plugin: {
      name: 'forge-vendor',
      setup(build) {
        build.onResolve({ filter: /[\\/]vendor[\\/][\w-]+\.ts$/ }, (args) => {
          const path = join(args.resolveDir, args.path);
          return prebuilt.has(path) ? { path, namespace: 'forge-vendor' } : undefined;
        });
        build.onLoad({ filter: /.*/, namespace: 'forge-vendor' }, (args) => {
          const module = prebuilt.get(args.path)!;
          used.add(module);
          module.contents ??= readFileSync(module.code);
          const load = [
            `import { loadVendorFile } from ${JSON.stringify(VENDOR_FILE)};`,
            `let loaded;`,
            `const load = () => (loaded ??= loadVendorFile(${JSON.stringify(`${BUNDLE_VENDOR_DIR}/${module.name}.cjs`)}, ${JSON.stringify(sha256(module.contents))}, import.meta.url));`,
          ];
          if (module.lazy) {
            const stands = module.exports.map((e) => `export const ${e} = lazyValue(() => load().${e});`);
            return { contents: [...load, `import { lazyValue } from ${JSON.stringify(LAZY_VALUE)};`, ...stands].join('\n'), loader: 'js', resolveDir: runtimeDir };
          }
          return { contents: [...load, `export const { ${module.exports.join(', ')} } = load();`].join('\n'), loader: 'js', resolveDir: runtimeDir };
        });
      },
    },
    outputs() {
      return [...used].sort((a, b) => (a.name < b.name ? -1 : 1)).map(({ name, code, contents }) => ({ path: `${BUNDLE_VENDOR_DIR}/${name}.cjs`, contents: contents!, source: code }));
    },
  };
}

function sha256(contents: Buffer): string {
  return createHash('sha256').update(contents).digest('hex');
}
