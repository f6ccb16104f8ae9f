/**
 * Keys in words, for the messages about `forge build --sign KEY` and FORGE_VERIFY_KEY: a key's type as
 * people write it ("an RSA key", not Node's "a rsa key"), and why a file Node cannot read as a key is
 * not one, instead of OpenSSL's "error:1E08010C:DECODER routines::unsupported".
 */
import { ownValue } from '../own-value.ts';

/** Node's asymmetricKeyType, with its article, as the type is written. */
const KEY_TYPES: Record<string, string> = {
  rsa: 'an RSA key',
  'rsa-pss': 'an RSA-PSS key',
  dsa: 'a DSA key',
  dh: 'a Diffie-Hellman key',
  ec: 'an ECDSA key',
  ed25519: 'an Ed25519 key',
  ed448: 'an Ed448 key',
  x25519: 'an X25519 key',
  x448: 'an X448 key',
};

/** "an RSA key", "an Ed25519 key", "an ECDSA key"; a type Node adds later: "a key of type NAME". */
export function keyTypeText(type: string | undefined): string {
  return (type && ownValue(KEY_TYPES, type)) ?? `a key of type ${type ?? 'unknown'}`;
}

/**
 * Why `text` (a file's contents, or FORGE_VERIFY_KEY's PEM) did not decode as the `wanted` half of a key
 * pair: the PEM block it holds, or that it holds none. Read from the text, as OpenSSL's error says none of it.
 */
export function undecodableKeyText(text: string, wanted: 'private' | 'public'): string {
  const label = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(text)?.[1];
  if (label === undefined) {
    if (/^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-\S+) /m.test(text)) return 'it is an OpenSSH public key (ssh-keygen\'s one-line format), not a PEM key';
    return text.includes('\0') ? 'it is a binary file, not a PEM key (a "-----BEGIN ...-----" block)' : 'it holds no PEM key (no "-----BEGIN ...-----" line)';
  }
  if (label === 'OPENSSH PRIVATE KEY') return 'it is an OpenSSH private key (ssh-keygen\'s format), not a PEM key';
  if (label === 'ENCRYPTED PRIVATE KEY' || /^Proc-Type: 4,ENCRYPTED/m.test(text)) return 'it is encrypted with a passphrase, which Forge cannot ask for';
  if (wanted === 'private' && label === 'PUBLIC KEY') return 'it is a public key; signing takes the private key (its public half is for FORGE_VERIFY_KEY)';
  if (wanted === 'private' && label === 'CERTIFICATE') return 'it is a certificate, not a private key';
  return `its "-----BEGIN ${label}-----" block does not decode (cut short or changed?)`;
}
