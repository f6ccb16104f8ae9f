/**
 * Secrets that need not sit in the environment, and where a generated one
 * is kept.
 *
 * Every secret the runtime reads from a variable NAME can come from a file
 * instead: NAME_FILE names it (Docker and Kubernetes secrets are files), so
 * FORGE_AUTH_TOKEN_FILE for the agent's token and OPENAI_API_KEY_FILE (or
 * <api_key_env>_FILE) for a model key. A file named so is hidden from every
 * tool process (tool-sandbox.ts).
 *
 * A token the agent generates is stored outside the work dir, where no file
 * tool can reach it: $FORGE_STATE_DIR, else $XDG_STATE_HOME/forge, else
 * ~/.local/state/forge; when that is not writable (or lies inside the work
 * dir), a private directory (0700, owned by this user) under the OS temp
 * dir. One token file per work dir; the file is 0600.
 */
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { hideFromTools } from './exec/tool-sandbox.ts';
import { rememberSecret } from './known-secrets.ts';
import { ForgeError } from './diagnostics.ts';
import type { DiagnosticCode } from './diagnostic-codes.ts';
import { whyUnreadable } from './unreadable-file.ts';

/** NAME_FILE names a file that holds no secret: a refusal to start with the code of the secret's own absence. */
export class SecretFileError extends ForgeError {}

/**
 * NAME's value, or the content of the file NAME_FILE names (trimmed), or undefined; remembered for redaction
 * either way. `code`: what a NAME_FILE that cannot be read or is empty is reported as (FORGE_MODEL_KEY).
 */
export function secretFromEnv(env: NodeJS.ProcessEnv, name: string, code: DiagnosticCode): string | undefined {
  const secret = readSecret(env, name, code);
  rememberSecret(secret);
  return secret;
}

function readSecret(env: NodeJS.ProcessEnv, name: string, code: DiagnosticCode): string | undefined {
  const direct = env[name]?.trim();
  if (direct) return direct;
  const file = env[`${name}_FILE`]?.trim();
  if (!file) return undefined;
  hideFromTools(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new SecretFileError(code, `${name}_FILE names ${file}, which cannot be read: ${whyUnreadable(err)}`, `put the value there (a mounted secret), or unset ${name}_FILE and set ${name}`);
  }
  if (!text) throw new SecretFileError(code, `${name}_FILE names ${file}, which is empty`, `write the value into that file, or unset ${name}_FILE and set ${name}`);
  return text;
}

/** FORGE_STATE_DIR names a directory that cannot hold the agent's secrets. */
export class StateDirError extends Error {}

/**
 * The directory generated secrets live in: created 0700, never inside `workDir`. One FORGE_STATE_DIR
 * names is that directory or none: falling back elsewhere would keep the token where the operator did
 * not mean it to be (a temp dir a restart empties, a volume not mounted).
 */
export function forgeStateDir(workDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const named = env.FORGE_STATE_DIR?.trim();
  if (named) {
    const problem = !isAbsolute(named) ? 'which is not an absolute path' : inside(resolve(named), resolve(workDir)) ? "which is inside the work dir, where the agent's tools read" : undefined;
    if (problem) throw new StateDirError(`FORGE_STATE_DIR names ${named}, ${problem}`);
    try {
      mkdirSync(named, { recursive: true, mode: 0o700 });
      if (!lstatSync(named).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code === 'EEXIST' || (err as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'it, or a part of its path, is a file' : whyUnreadable(err);
      throw new StateDirError(`FORGE_STATE_DIR names ${named}, which cannot be made a directory: ${why}`);
    }
    hideFromTools(named);
    return named;
  }
  const candidates = [
    env.XDG_STATE_HOME && join(env.XDG_STATE_HOME, 'forge'),
    env.HOME && join(env.HOME, '.local', 'state', 'forge'),
    join(homedir(), '.local', 'state', 'forge'),
  ].filter((d): d is string => !!d && isAbsolute(d));
  for (const dir of candidates) {
    if (inside(resolve(dir), resolve(workDir))) continue;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      hideFromTools(dir);
      return dir;
    } catch {
      // not writable here (a read-only home in a container): try the next
    }
  }
  const dir = join(tmpdir(), `forge-state-${process.getuid?.() ?? 'user'}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  // A directory someone else made first (or a symlink) is not ours to keep secrets in.
  if (!stat.isDirectory() || (process.getuid && stat.uid !== process.getuid())) throw new Error(`${dir} is not a private directory of this user`);
  chmodSync(dir, 0o700);
  hideFromTools(dir);
  return dir;
}

/** Where the generated token of the agent serving `workDir` is kept. */
export function generatedTokenFile(workDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const key = createHash('sha256').update(resolve(workDir)).digest('hex').slice(0, 16);
  return join(forgeStateDir(workDir, env), `token-${key}`);
}

function inside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}
