/**
 * Checks that a bundle on disk is the one `forge build` made: every file
 * checksums.json lists has the recorded sha256, no code was added beside
 * them, and — when FORGE_VERIFY_KEY names a public key — checksums.json
 * carries a valid Ed25519 signature (checksums.json.sig, from
 * `forge build --sign`). `serve` and `--stdio` run it before starting;
 * `node runtime.mjs verify` runs it alone.
 *
 * Only the bundle's own files are hashed (a few MB: runtime.mjs, agent.json,
 * tools/, vendor/), so the check costs milliseconds at start.
 *
 * The runtime core's code cache (.code-cache/, runtime/core-loader.ts) is
 * made after the build, so no checksum covers it. It is trusted as the
 * bundle folder is: whoever can write it can write the core and
 * checksums.json beside it, which is all an unsigned check can stand up
 * to. A signed bundle (FORGE_VERIFY_KEY) runs without the cache.
 */
import { createHash, createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix, sep } from 'node:path';
import { error, type Diagnostic } from '../diagnostics.ts';
import { keyTypeText, undecodableKeyText } from './key-text.ts';
import { whyUnreadable } from '../unreadable-file.ts';
import { direntDir } from '../dirent-dir.ts';

export const CHECKSUMS_FILE = 'checksums.json';
export const SIGNATURE_FILE = 'checksums.json.sig';

/** Files a bundle may hold that checksums.json does not list (it cannot list itself, and the archive is written after it). */
const UNLISTED_ALLOWED = new Set([CHECKSUMS_FILE, SIGNATURE_FILE]);

export interface VerifyOptions {
  /** FORGE_VERIFY_KEY: a PEM public key, or the path of a file holding one. */
  verifyKey?: string;
}

export interface VerifyReport {
  ok: boolean;
  files: number;
  signed: boolean;
  diagnostics: Diagnostic[];
}

export function verifyBundle(bundleDir: string, options: VerifyOptions = {}): VerifyReport {
  const diagnostics: Diagnostic[] = [];
  const fail = (message: string, hint?: string, file?: string): VerifyReport => {
    diagnostics.push(error('FORGE_BUNDLE_TAMPERED', message, file ? { file } : {}, hint));
    return { ok: false, files: 0, signed: false, diagnostics };
  };
  const checksumsPath = join(bundleDir, CHECKSUMS_FILE);
  if (!existsSync(checksumsPath)) return fail(`${CHECKSUMS_FILE} is missing from the bundle`, 'deploy the whole build output (forge build writes it), or rebuild');
  const raw = readFileSync(checksumsPath);
  let listed: Record<string, string>;
  try {
    const parsed = JSON.parse(raw.toString('utf8')) as { algorithm?: string; files?: Record<string, string> };
    if (parsed.algorithm !== 'sha256' || !parsed.files || typeof parsed.files !== 'object') throw new Error('unexpected shape');
    listed = parsed.files;
  } catch {
    return fail(`${CHECKSUMS_FILE} is not a checksum list forge build wrote`, undefined, CHECKSUMS_FILE);
  }

  let signed = false;
  if (options.verifyKey) {
    // A key that cannot be used is the deployment's configuration, not a sign of tampering.
    const key = readVerifyKey(options.verifyKey);
    if ('message' in key) {
      diagnostics.push(error('FORGE_VERIFY_KEY', key.message, key.file ? { file: key.file } : {}, key.hint));
      return { ok: false, files: 0, signed: false, diagnostics };
    }
    const signature = signatureProblem(bundleDir, raw, key.key);
    if (signature) return fail(signature.message, signature.hint, SIGNATURE_FILE);
    signed = true;
  }

  for (const [path, sha256] of Object.entries(listed)) {
    if (!isBundlePath(path)) return fail(`${CHECKSUMS_FILE} lists "${path}", which is outside the bundle`, undefined, CHECKSUMS_FILE);
    // One read, no stat before it, and the path joined as text: isBundlePath() took a normalized relative
    // path, and join()'s normalizing and an existsSync() per file were a third of the check's time.
    let bytes: Buffer;
    try {
      bytes = readFileSync(`${bundleDir}${sep}${path}`);
    } catch (err) {
      // Not there, under something that is not a folder, or a folder: not the file the build wrote, as existsSync() judged before.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'EISDIR') throw err;
      diagnostics.push(error('FORGE_BUNDLE_TAMPERED', `${path} is listed in ${CHECKSUMS_FILE} but ${code === 'EISDIR' ? 'is a directory' : 'missing'}`, { file: path }, 'deploy the whole build output'));
      continue;
    }
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== sha256) diagnostics.push(error('FORGE_BUNDLE_TAMPERED', `${path} was changed after the build (sha256 ${actual.slice(0, 12)}…, built as ${sha256.slice(0, 12)}…)`, { file: path }, 'rebuild with forge build, and deploy the new output as a whole'));
  }
  for (const path of unlistedCode(bundleDir, listed)) {
    diagnostics.push(error('FORGE_BUNDLE_TAMPERED', `${path} is not part of the build (checksums.json does not list it)`, { file: path }, 'remove it, or rebuild'));
  }
  return { ok: diagnostics.length === 0, files: Object.keys(listed).length, signed, diagnostics };
}

const KEY_HINT = 'set FORGE_VERIFY_KEY to the Ed25519 public key matching `forge build --sign`, in PEM form or as the path of a .pem file (openssl pkey -in sign.pem -pubout -out sign.pub writes it from the signing key)';

/** FORGE_VERIFY_KEY as a public key: PEM text, or the path of a file holding it (doctor reads it so too). */
export function readVerifyKey(verifyKey: string): { key: KeyObject } | { message: string; hint: string; file?: string } {
  const inline = verifyKey.includes('-----BEGIN');
  let pem: string;
  try {
    pem = inline ? verifyKey : readFileSync(verifyKey, 'utf8');
  } catch (err) {
    return { message: `FORGE_VERIFY_KEY names a file that cannot be read: ${whyUnreadable(err)}`, hint: KEY_HINT, file: verifyKey };
  }
  const file = inline ? undefined : verifyKey;
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    // OpenSSL's "DECODER routines::unsupported" says nothing of what the text holds instead.
    return { message: `FORGE_VERIFY_KEY is not a public key in PEM form: ${undecodableKeyText(pem, 'public')}`, hint: KEY_HINT, file };
  }
  if (key.asymmetricKeyType !== 'ed25519') return { message: `FORGE_VERIFY_KEY is ${keyTypeText(key.asymmetricKeyType)}; bundles are signed with Ed25519`, hint: KEY_HINT, file };
  return { key };
}

function signatureProblem(bundleDir: string, checksums: Buffer, key: KeyObject): { message: string; hint?: string } | undefined {
  const sigPath = join(bundleDir, SIGNATURE_FILE);
  if (!existsSync(sigPath)) return { message: `the bundle is not signed, and FORGE_VERIFY_KEY asks for a signature`, hint: 'build it with forge build --sign KEY' };
  const signature = Buffer.from(readFileSync(sigPath, 'utf8').trim(), 'base64');
  if (!verifySignature(null, checksums, key, signature)) return { message: `${SIGNATURE_FILE} does not match ${CHECKSUMS_FILE} under FORGE_VERIFY_KEY`, hint: 'the checksums were changed, or the bundle was signed with another key' };
  return undefined;
}

/** A relative forward-slash path that stays inside the bundle. */
function isBundlePath(path: string): boolean {
  if (path === '' || path.startsWith('/') || path.includes('\\')) return false;
  const normal = posix.normalize(path);
  return normal === path && !normal.startsWith('../') && normal !== '..';
}

/**
 * Files the runtime could load that the build did not write: anything under
 * tools/ (a Python module there shadows an import) or vendor/ (the prebuilt
 * libraries), and code or JSON at the top level. Other files (a work dir's
 * .forge/, the archive) are not code.
 */
function unlistedCode(bundleDir: string, listed: Record<string, string>): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(bundleDir, { withFileTypes: true })) {
    if (entry.isFile() && /\.(m?js|cjs|json|py|ya?ml)$/.test(entry.name) && !(entry.name in listed) && !UNLISTED_ALLOWED.has(entry.name)) found.push(entry.name);
  }
  for (const dirName of ['tools', 'vendor']) {
    const dir = join(bundleDir, dirName);
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isDirectory()) continue;
      // Most entries sit in the folder itself: their path is two names joined, without join()'s normalizing.
      const parent = direntDir(entry);
      const rel = parent === dir ? `${dirName}/${entry.name}` : posix.join(dirName, ...join(parent, entry.name).slice(dir.length + 1).split(/[\\/]/));
      if (!(rel in listed)) found.push(rel);
    }
  }
  return found.sort();
}
