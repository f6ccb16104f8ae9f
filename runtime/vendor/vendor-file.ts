/**
 * A prebuilt third-party module of a built bundle (vendor/<name>.cjs, written
 * by stages/vendor-modules.ts), read and evaluated on its first use. The
 * build wrote the file's sha256 into the runtime core, and
 * only bytes that match are compiled: a file changed after the start-time
 * check, or on a path that never runs that check (`call`), is refused, not
 * run. The error keeps its code through the registry (FORGE_BUNDLE_TAMPERED).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ForgeError } from '../diagnostics.ts';

const HINT = 'deploy the whole build output (forge build writes vendor/ beside runtime.mjs), or rebuild';

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
  // Compiled from the very bytes that were hashed, as the CommonJS module it is.
  const module = { exports: {} as Record<string, unknown> };
  new Function('module', 'exports', 'require', code.toString('utf8'))(module, module.exports, createRequire(file));
  return module.exports;
}
