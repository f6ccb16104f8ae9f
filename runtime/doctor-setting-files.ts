/**
 * Doctor's checks of the files the agent's settings name, read as serve reads them at start (auth.ts,
 * verify-bundle.ts): a file that is there but is a directory, unreadable or empty fails here as it stops
 * the start, with the same code, words and hint, and not only a file that is missing.
 */
import { existsSync } from 'node:fs';
import type { DoctorCheck } from './doctor.ts';
import { generatedTokenFile } from './secrets.ts';
import { AuthConfigError, tokenFromFile } from './server/auth.ts';

/** Where the agent's token comes from; FORGE_AUTH_TOKEN wins over FORGE_AUTH_TOKEN_FILE, as it does in serve. */
export function tokenCheck(workDir: string, env: NodeJS.ProcessEnv): DoctorCheck {
  if (env.FORGE_AUTH_TOKEN?.trim()) return { name: 'token', ok: true, detail: 'FORGE_AUTH_TOKEN (environment)' };
  const file = env.FORGE_AUTH_TOKEN_FILE?.trim();
  if (file) {
    try {
      tokenFromFile(file);
    } catch (err) {
      if (!(err instanceof AuthConfigError)) throw err;
      return { name: 'token', ok: false, detail: `${err.message}; the agent refuses to start`, hint: err.hint, code: err.code };
    }
    return { name: 'token', ok: true, detail: `FORGE_AUTH_TOKEN_FILE=${file}` };
  }
  const generated = generatedTokenFile(workDir, env);
  return { name: 'token', ok: true, detail: existsSync(generated) ? `in ${generated} (generated at an earlier start)` : `generated into ${generated} at the first start` };
}
