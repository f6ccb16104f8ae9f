/**
 * Where a built bundle's tools get their code: the builtins and adapter
 * modules compiled into the runtime core (forge-runtime.cjs), TypeScript
 * tools compiled into runtime.mjs and served by the bundle itself
 * (`runtime.mjs __worker NAME`), other sources beside it. The rest of
 * the runtime is assembled from agent.json (assemble.ts), as for sources.
 */
import { isAbsolute, join } from 'node:path';
import type { CodeSource } from './assemble.ts';
import type { BundleContents } from './main.ts';
import { NO_CODE_CACHE_ARG } from './core-loader.ts';

export function bundleCodeSource(contents: BundleContents, bundleFile: string): CodeSource {
  const bundleDir = join(bundleFile, '..');
  return {
    inBundle: true,
    builtins: contents.builtins,
    adapterModules: contents.adapters ?? {},
    yamlTools: contents.yamlTools,
    resolveSource: (path) => (isAbsolute(path) ? path : join(bundleDir, path)),
    node: {
      // A worker runs the core as the agent does: without the code cache if the agent does without it.
      worker: async (spec) => ({ command: process.execPath, args: [bundleFile, '__worker', spec.name, ...(contents.codeCache?.cache === 'off' ? [NO_CODE_CACHE_ARG] : [])] }),
      script: async (spec) => ({ command: process.execPath, args: [join(bundleDir, spec.source!.path)] }),
    },
    origin: (spec) => `agent.json#${spec.name}`,
  };
}
