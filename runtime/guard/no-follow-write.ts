/**
 * Writes a file without following a symlink at its last segment. The path
 * guard has already resolved every symlink; if one appears there between the
 * check and the write (a swap), the open fails instead of writing through it.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0);

export async function writeFileNoFollow(path: string, data: string | Uint8Array, mode = 0o666): Promise<void> {
  const handle = await open(path, WRITE_FLAGS, mode);
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}
