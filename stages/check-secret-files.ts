/**
 * Stage: check secret files. Everything in a tool dir ships in the bundle,
 * and so in every container made from it: a private key or a credentials
 * file left beside the tools would leak with each image pushed. A file is
 * suspect by its name (id_rsa, *.key, credentials.json, secrets.yaml…) or by
 * holding a PEM private key. Dotfiles (.env, .npmrc, .pypirc) never ship, so
 * they are not looked at. A --prod build, the one that is deployed, refuses
 * a suspect file; a dev build warns, so local work is not blocked.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import ignore from 'ignore';
import { error, warning, type Diagnostic } from '../runtime/diagnostics.ts';
import { ignorePath, type SourceFile } from './discover-tools.ts';

/** Names that hold a key or credentials, with what they usually are. */
const SECRET_NAMES: { pattern: RegExp; what: string }[] = [
  { pattern: /^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/i, what: 'an SSH private key' },
  { pattern: /\.(key|p12|pfx|ppk)$/i, what: 'a private key' },
  { pattern: /\.(jks|keystore|kdbx)$/i, what: 'a key store' },
  { pattern: /^(credentials(\.json)?|client_secrets?.*\.json)$/i, what: 'a credentials file' },
  { pattern: /^secrets?\.(ya?ml|json|toml)$/i, what: 'a secrets file' },
  { pattern: /\.env$/i, what: 'an environment file' },
  { pattern: /\.tfstate$/i, what: 'Terraform state (it holds the secrets Terraform created)' },
];

/** A PEM private key: its header followed by key material (a line of code that only names the header is not a key). */
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,400}?[A-Za-z0-9+/]{40}/;

/** Larger files are checked by name only: reading them twice would slow the build for little. */
const CONTENT_LIMIT = 1024 * 1024;

/** Why a file name says it holds a secret, or undefined. Source code (a tool, a helper module) is never suspect by name. */
export function secretFileName(name: string): string | undefined {
  return SECRET_NAMES.find(({ pattern }) => pattern.test(name))?.what;
}

/** Whether the text holds a PEM private key (also inside a JSON string, as a cloud service account key does). */
export function holdsPrivateKey(text: string): boolean {
  return PEM_PRIVATE_KEY.test(text);
}

/** Why the file looks like a secret, or undefined. */
function secretReason(file: SourceFile, isTool: boolean): string | undefined {
  const byName = isTool ? undefined : secretFileName(basename(file.withinDir));
  if (byName) return `its name says it is ${byName}`;
  if (file.privateKey === undefined && file.stat.size > CONTENT_LIMIT) return undefined;
  return (file.privateKey ?? holdsPrivateKey(readText(file.absolute))) ? 'it holds a PEM private key' : undefined;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return ''; // discovery already reported a file it cannot read
  }
}

/**
 * `files`: every file the bundle will ship; `tools`: those that declare a
 * tool (code, judged by content only).
 */
export function checkSecretFiles(files: readonly SourceFile[], tools: ReadonlySet<SourceFile>, prod: boolean, notSecrets: readonly string[] = []): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  // forge.yaml's not_secrets: files that only look like secrets (a test fixture's key), shipped on purpose.
  const shippedOnPurpose = notSecrets.length ? ignore().add(notSecrets) : undefined;
  for (const file of files) {
    if (shippedOnPurpose?.ignores(ignorePath(file))) continue;
    const reason = secretReason(file, tools.has(file));
    if (!reason) continue;
    const message = `${file.display} looks like a secret (${reason}) and would ship in the bundle and every image made from it`;
    diagnostics.push((prod ? error : warning)('FORGE_SECRET_FILE', message, { file: file.display }, hintFor(file, prod)));
  }
  return diagnostics;
}

function hintFor(file: SourceFile, prod: boolean): string {
  const keepOut = `move it out of the tool directory and give it to the agent at run time (an environment variable, or a file mounted into the container), or list it under ignore: in forge.yaml (ignore: [${ignorePath(file)}]) to keep it out of the bundle; if it is no secret (a test fixture), list it under not_secrets: (not_secrets: [${ignorePath(file)}])`;
  return prod ? keepOut : `${keepOut}; forge build --prod refuses it`;
}
