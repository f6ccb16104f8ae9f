/**
 * Stage (with --sign KEY): an Ed25519 signature over checksums.json's exact
 * bytes, written as checksums.json.sig (base64). A bundle started with
 * FORGE_VERIFY_KEY=<the public key> refuses to serve unless it verifies.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { error } from '../runtime/diagnostics.ts';
import { keyTypeText, undecodableKeyText } from '../runtime/verify/key-text.ts';
import { CHECKSUMS_FILE, SIGNATURE_FILE } from '../runtime/verify/verify-bundle.ts';
import { whyUnreadable } from '../runtime/unreadable-file.ts';
import type { OutputWriter } from './output-writer.ts';
import type { StageContext } from './stage.ts';

/** What --sign takes, and how to make one: said under every refusal of the key. */
const SIGN_HINT = 'forge build --sign takes an Ed25519 private key in PEM form; make one with: openssl genpkey -algorithm ed25519 -out sign.pem';

export function signChecksums(keyFile: string, writer: OutputWriter, ctx: StageContext): void {
  // Named as the other diagnostics name files: from where the command runs.
  const shown = relative(ctx.cwd, keyFile) || keyFile;
  const refuse = (why: string) => ctx.report(error('FORGE_SIGN_KEY', `cannot use the signing key: ${why}`, { file: shown }, SIGN_HINT));
  let text: string;
  try {
    text = readFileSync(keyFile, 'utf8');
  } catch (err) {
    ctx.report(error('FORGE_SIGN_KEY', `cannot read the signing key: ${whyUnreadable(err)}`, { file: shown }, SIGN_HINT));
    return;
  }
  let key;
  try {
    key = createPrivateKey(text);
  } catch {
    // OpenSSL's "DECODER routines::unsupported" names neither the file nor what is wrong with it.
    refuse(undecodableKeyText(text, 'private'));
    return;
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    refuse(`it is ${keyTypeText(key.asymmetricKeyType)}; bundles are signed with Ed25519`);
    return;
  }
  const signature = sign(null, writer.read(CHECKSUMS_FILE), key);
  writer.write(SIGNATURE_FILE, signature.toString('base64') + '\n');
}
