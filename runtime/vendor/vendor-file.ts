/**
 * A prebuilt third-party module of a built bundle (vendor/<name>.cjs, written
 * by stages/vendor-modules.ts), read and evaluated on its first use. The
 * build wrote the file's sha256 into the runtime core, and
 * only bytes that match are compiled: a file changed after the start-time
 * check, or on a path that never runs that check (`call`), is refused, not
 * run. The error keeps its code through the registry (FORGE_BUNDLE_TAMPERED).
 *
 * Where the start uses the bundle's code cache (core-loader.ts), a module is
 * compiled with a cache of its own in the same folder, filed under the sha256
 * it was checked against (code-cache.ts): ajv and its first validator take
 * 18 ms to compile from source and 6 ms from the cache, the YAML parser and
 * its first parse 14 and 3. A process writes the caches it lacked as it
 * exits (the modules are loaded at a first call, long after the core's cache
 * is written); a TS tool's worker only reads them.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type CachedModule, loadCheckedWithContentCache } from '../code-cache.ts';
import { ForgeError } from '../diagnostics.ts';
import { vendorCodeCache } from './vendor-code-cache.ts';

const HINT = 'deploy the whole build output (forge build writes vendor/ beside runtime.mjs), or rebuild';

/**
 * What each module's cache did, said with FORGE_VERBOSE as the process exits, and written where it was
 * missing or refused if the process succeeded (as the core's is: main.ts): a run that failed part way has
 * compiled less, and its cache would stand in the way of one that holds more.
 */
const loads: { path: string; cache: CachedModule['cache']; save(): void }[] = [];

function vendorCachesDone(writes: boolean): void {
  for (const load of loads) {
    if (writes) load.save();
    if (process.env.FORGE_VERBOSE) process.stderr.write(`[forge] code cache of ${load.path}: ${load.cache}\n`);
  }
}

/** `path`: relative to `bundleUrl`, the import.meta.url of the runtime core that holds the stand-in (beside runtime.mjs). */
export function loadVendorFile(path: string, sha256: string, bundleUrl: string): Record<string, unknown> {
  const file = fileURLToPath(new URL(path, bundleUrl));
  let code: Buffer;
  try {
    code = readFileSync(file);
  } catch (err) {
    throw new ForgeError('FORGE_BUNDLE_TAMPERED', `${path} is missing beside runtime.mjs (${(err as NodeJS.ErrnoException).code})`, HINT);
  }
  if (createHash('sha256').update(code).digest('hex') !== sha256) {
    throw new ForgeError('FORGE_BUNDLE_TAMPERED', `${path} was changed after the build (its sha256 is not the one the bundle was built with)`, HINT);
  }
  // Compiled from the very bytes that were hashed, as the CommonJS module it is (without a cache folder: with no cache).
  const codeCache = vendorCodeCache();
  const loaded = loadCheckedWithContentCache(file, code, sha256, codeCache?.dir);
  if (codeCache) {
    if (loads.length === 0) process.once('exit', (code) => vendorCachesDone(codeCache.writes && code === 0));
    loads.push({ path, cache: loaded.cache, save: loaded.save });
  }
  return loaded.exports as Record<string, unknown>;
}
