/**
 * gzip whose bytes depend only on the input and the level: zlib writes no
 * timestamp, and the header's OS byte (RFC 1952 §2.3.1) is set to 255,
 * "unknown", on every platform. The bundle archive's members and the image
 * layers are compressed this way, so their digests are the same whoever
 * builds them.
 */
import { promisify } from 'node:util';
import { gzip, gzipSync } from 'node:zlib';

const gzipAsync = promisify(gzip);

/** On libuv's thread pool. */
export async function portableGzip(bytes: Uint8Array, level: number): Promise<Buffer> {
  return withUnknownOs(await gzipAsync(bytes, { level }));
}

/** On this thread: for small inputs, which on the pool would wait behind other file work. */
export function portableGzipSync(bytes: Uint8Array, level: number): Buffer {
  return withUnknownOs(gzipSync(bytes, { level }));
}

function withUnknownOs(member: Buffer): Buffer {
  member[9] = 0xff;
  return member;
}
