/**
 * An adapter tool's name: `<namespace>__<remote name>` (fs__read_file,
 * petstore__getPetById), with characters a model provider refuses turned
 * into "_", and a name past 64 characters shortened with a hash of the
 * original, so that it stays unique and the same from build to build.
 */
import { createHash } from 'node:crypto';
import { NAMESPACE_SEPARATOR } from '../names.ts';

const MAX_NAME = 64;

export function adapterToolName(namespace: string, remoteName: string): string {
  const safe = remoteName.replace(/[^a-zA-Z0-9_-]/g, '_');
  const name = `${namespace}${NAMESPACE_SEPARATOR}${safe}`;
  if (name.length <= MAX_NAME) return name;
  const hash = createHash('sha256').update(remoteName).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_NAME - hash.length - 1)}_${hash}`;
}
