/**
 * How runtime.mjs starts the runtime core (forge-runtime.cjs beside it): as
 * one CommonJS file compiled with V8's code cache (code-cache.ts), kept in
 * the bundle's .code-cache/ folder. The first run that finds no cache for
 * this Node writes one once it has started (run() in main.ts), holding
 * every function its start compiled; later starts of the same bytes on the
 * same Node compile almost nothing. An image build writes it as the
 * Dockerfile's warm-up step, where the image's own Node runs.
 *
 * The cache sits where the bundle's code sits, so it is trusted as that code
 * is: whoever can write it can write forge-runtime.cjs. It is filed under
 * the core's sha256 and Node's version, and V8 refuses data made by another
 * V8 or under other flags. checksums.json cannot list it (it is made after
 * the build), so a bundle that must run signed bytes only (FORGE_VERIFY_KEY
 * set) compiles without it, as does FORGE_CODE_CACHE=off.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CachedModule, loadWithContentCache } from './code-cache.ts';
import { setVendorCodeCache } from './vendor/vendor-code-cache.ts';

/** The core's name in the bundle. */
export const CORE_FILE = 'forge-runtime.cjs';
/** The folder beside runtime.mjs that holds the core's code cache (not in checksums.json: made after the build). */
export const CODE_CACHE_DIR = '.code-cache';
/** How a tool worker (`runtime.mjs __worker NAME`) is told its agent runs without the cache: its environment is the tool's, not the agent's. */
export const NO_CODE_CACHE_ARG = '--no-code-cache';

/** What the core's code cache did for this start, and how to write it (a no-op when it was used). */
export type CoreCodeCache = Pick<CachedModule, 'cache' | 'save'>;

/** The project's side of the start: its TypeScript tools that export execute(). */
export interface ProjectCode {
  bundleUrl: string;
  nodeTools: Record<string, () => Promise<unknown>>;
}

interface Core {
  start(project: ProjectCode & { codeCache: CoreCodeCache }): void;
}

/** Loads the core beside `project.bundleUrl` (runtime.mjs) and starts it with the project's code. */
export function startCore(project: ProjectCode): void {
  const bundleDir = dirname(fileURLToPath(project.bundleUrl));
  const [command, , workerArg] = process.argv.slice(2);
  const worker = command === '__worker';
  const cached = process.env.FORGE_CODE_CACHE !== 'off' && !process.env.FORGE_VERIFY_KEY && !(worker && workerArg === NO_CODE_CACHE_ARG);
  const cacheDir = cached ? join(bundleDir, CODE_CACHE_DIR) : undefined;
  // The prebuilt vendor modules compile with caches of their own in the same folder (vendor-file.ts), from the core's first line on.
  setVendorCodeCache(cacheDir === undefined ? undefined : { dir: cacheDir, writes: !worker });
  const core = loadWithContentCache(join(bundleDir, CORE_FILE), cacheDir);
  // A TS tool worker reads the cache but never writes it: its agent, started before it, writes one, and the
  // worker would spend its first call on V8's serializing.
  (core.exports as Core).start({ ...project, codeCache: { cache: core.cache, save: worker ? () => {} : core.save } });
}
