/**
 * The `pg` client in a build: like the protocol SDKs (vendor-modules.ts),
 * an esbuild plugin stands a one-line module in for
 * runtime/state/pg-client.ts, and the prebuilt client (scripts/build-vendor.mjs)
 * is spliced into the runtime core (forge-runtime.cjs) — gzipped, as base64 — behind a function that
 * inflates and evaluates it on first call. Every bundle can open a Postgres
 * state store; only a process that does pays for the client, and the bundle
 * carries a third of its size. Without a prebuilt copy the client is
 * bundled from source as usual.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { forgeRoot, runtimeDir } from './forge-paths.ts';

const PREBUILT = join(forgeRoot, 'dist', 'runtime-vendor', 'pg.cjs.gz');
const MODULE = join(runtimeDir, 'state', 'pg-client.ts');
const LOADER = '__forgePg';

export interface PgSplice {
  plugin: Plugin;
  /** The prebuilt file (an input of the build cache). */
  files: string[];
  /** Inserts the compressed client into the core's text, if the core uses it. */
  splice(runtimeText: string): string;
}

export function pgSplice(): PgSplice | undefined {
  if (!existsSync(PREBUILT)) return undefined;
  let used = false;
  return {
    files: [PREBUILT],
    plugin: {
      name: 'forge-pg',
      setup(build) {
        build.onResolve({ filter: /[\\/]pg-client\.ts$/ }, (args) => {
          const path = join(args.resolveDir, args.path);
          return path === MODULE ? { path, namespace: 'forge-pg' } : undefined;
        });
        build.onLoad({ filter: /.*/, namespace: 'forge-pg' }, () => {
          used = true;
          return { contents: `export default ${LOADER}().default;\n`, loader: 'js' };
        });
      },
    },
    splice(runtimeText) {
      if (!used) return runtimeText;
      const packed = readFileSync(PREBUILT).toString('base64');
      // `require` is the core's own: the CommonJS wrapper's (core-loader.ts), after the banner on its first line.
      const loader = `var ${LOADER}Cache;function ${LOADER}(){return ${LOADER}Cache??=(function(){var module={exports:{}};new Function("module","exports","require",require("node:zlib").gunzipSync(Buffer.from("${packed}","base64")).toString())(module,module.exports,require);return module.exports})()}\n`;
      const firstLineEnd = runtimeText.indexOf('\n') + 1;
      return runtimeText.slice(0, firstLineEnd) + loader + runtimeText.slice(firstLineEnd);
    },
  };
}
