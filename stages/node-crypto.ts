/**
 * node:crypto, loaded when first used: a command that hashes nothing (a
 * cached build, `forge --help`) does not pay for loading it, and on a cached
 * build loading it cost more than checking every stamp.
 */
import { createRequire } from 'node:module';

let loaded: typeof import('node:crypto') | undefined;

export function nodeCrypto(): typeof import('node:crypto') {
  return (loaded ??= createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto'));
}
