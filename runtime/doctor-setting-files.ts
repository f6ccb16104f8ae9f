/**
 * Doctor's checks of the files the agent's settings name, read as serve reads them at start (auth.ts,
 * verify-bundle.ts): a file that is there but is a directory, unreadable or empty fails here as it stops
 * the start, with the same code, words and hint, and not only a file that is missing.
 */
import { existsSync } from 'node:fs';
import type { DoctorCheck } from './doctor.ts';
import { AuthConfigError, generatedTokenPath, sharedStoreWithoutToken, tokenFromFile } from './server/auth.ts';
import { readVerifyKey } from './verify/verify-bundle.ts';

/**
 * Where the agent's token comes from; FORGE_AUTH_TOKEN wins over FORGE_AUTH_TOKEN_FILE, as it does in serve.
 * `shared`: the state store is one replicas share, where serve refuses a generated token (each replica's would differ).
 */
export function tokenCheck(workDir: string, env: NodeJS.ProcessEnv, shared = false): DoctorCheck {
  if (env.FORGE_AUTH_TOKEN?.trim()) return { name: 'token', ok: true, detail: 'FORGE_AUTH_TOKEN (environment)' };
  const file = env.FORGE_AUTH_TOKEN_FILE?.trim();
  try {
    if (file) {
      tokenFromFile(file);
      return { name: 'token', ok: true, detail: `FORGE_AUTH_TOKEN_FILE=${file}` };
    }
    if (shared) throw sharedStoreWithoutToken();
    const generated = generatedTokenPath(workDir, env);
    return { name: 'token', ok: true, detail: existsSync(generated) ? `in ${generated} (generated at an earlier start)` : `generated into ${generated} at the first start` };
  } catch (err) {
    if (!(err instanceof AuthConfigError)) throw err;
    return { name: 'token', ok: false, detail: `${err.message}; the agent refuses to start`, hint: err.hint, code: err.code };
  }
}

/**
 * FORGE_VERIFY_KEY, which serve and --stdio read before anything else and refuse to start on when it is not an
 * Ed25519 public key (a file not there, not PEM, another type). Undefined when unset, or FORGE_VERIFY=off (not read).
 */
export function verifyKeyCheck(env: NodeJS.ProcessEnv): DoctorCheck | undefined {
  if (!env.FORGE_VERIFY_KEY || env.FORGE_VERIFY === 'off') return undefined;
  const key = readVerifyKey(env.FORGE_VERIFY_KEY);
  if ('key' in key) return { name: 'verify key', ok: true, detail: 'FORGE_VERIFY_KEY: an Ed25519 public key; serve checks checksums.json.sig against it (node runtime.mjs verify checks it now)' };
  return { name: 'verify key', ok: false, detail: `${key.message}; serve refuses to start`, hint: key.hint, code: 'FORGE_VERIFY_KEY', ...(key.file ? { file: key.file } : {}) };
}
