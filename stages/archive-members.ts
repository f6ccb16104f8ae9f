/**
 * The bundle archive's compression: a gzip member for each file the builds
 * on a machine share (the runtime core and the vendor/ files), and one for
 * the project's files between two of those. A gzip file may hold several
 * members back to back (RFC 1952 §2.2), and gunzip, tar, Node's zlib, Go and
 * Python read them as one stream. A member depends only on its bytes, so the
 * shared ones are kept in Forge's cache and reused; the project's are
 * compressed each time (they change with every edit, and would only pile up)
 * on this thread: a few milliseconds, where on libuv's thread pool they
 * waited behind the writes of the output's files (100 tools: 16–40 ms).
 * Shared members the cache lacks are compressed on the pool, side by side.
 *
 * A member is kept under the digest of its tar bytes, the compression
 * level and the zlib version (so a cached member is byte for byte the one
 * this Node would make, and the archive is the same with the cache or
 * without it), behind the sha256 of the member itself: a file whose member
 * does not hash to it is never used. Checking that hash costs a twentieth
 * of deflating again; inflating to compare would cost a third.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { markUsed, removeUnused, writeFileAtomically } from './blob-cache.ts';
import { portableGzip, portableGzipSync } from './portable-gzip.ts';

const LEVEL = 6;

export interface ArchiveMemberOptions {
  /** Forge's machine-wide cache; members are not kept without one. */
  cacheDir?: string;
  /** false: compress every member again (and cache the result), as `--no-cache` asks. */
  reuse?: boolean;
}

/** Some tar bytes to become one member; `shared` ones are kept in the cache. */
export interface ArchiveSegment {
  bytes: Buffer;
  shared: boolean;
}

/** Compresses each segment into its own gzip member, in order. */
export async function gzipMembers(segments: readonly ArchiveSegment[], options: ArchiveMemberOptions = {}): Promise<Buffer[]> {
  const dir = options.cacheDir && join(options.cacheDir, 'archive-members');
  let wrote = false;
  const members = await Promise.all(
    segments.map(async ({ bytes, shared }) => {
      const file = dir && shared ? join(dir, `${memberKey(bytes)}.gz`) : undefined;
      if (file && options.reuse !== false) {
        const cached = cachedMember(file);
        if (cached) return cached;
      }
      const member = shared ? await portableGzip(bytes, LEVEL) : portableGzipSync(bytes, LEVEL);
      if (file) wrote = keep(file, member) || wrote;
      return member;
    }),
  );
  if (wrote && dir) removeUnused(dir, '.gz');
  return members;
}

function memberKey(bytes: Buffer): string {
  return createHash('sha256').update(`gzip-member\0${LEVEL}\0${process.versions.zlib}\0`).update(bytes).digest('hex');
}

const DIGEST_BYTES = 32;

function cachedMember(file: string): Buffer | undefined {
  try {
    const kept = readFileSync(file);
    const member = kept.subarray(DIGEST_BYTES);
    if (!createHash('sha256').update(member).digest().equals(kept.subarray(0, DIGEST_BYTES))) return undefined;
    markUsed(file);
    return member;
  } catch {
    return undefined; // not cached (or unreadable): compressed again
  }
}

function keep(file: string, member: Buffer): boolean {
  try {
    writeFileAtomically(file, Buffer.concat([createHash('sha256').update(member).digest(), member]));
    return true;
  } catch {
    return false; // without a writable cache, the next build compresses again
  }
}
