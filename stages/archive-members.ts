/**
 * The bundle archive's compression: a gzip member per large file, and one
 * for the small files between two large ones. A gzip file may hold several
 * members back to back (RFC 1952 §2.2), and gunzip, tar, Node's zlib, Go and
 * Python read them as one stream. A member depends only on its bytes, so the
 * large ones — the runtime core and the vendor/ files, the same in every
 * build on a machine — are kept in Forge's cache and reused. The others are
 * compressed side by side on libuv's thread pool.
 *
 * A member is kept under the digest of its tar bytes, the compression
 * level and the zlib version (so a cached member is byte for byte the one
 * this Node would make, and the archive is the same with the cache or
 * without it), behind the sha256 of the member itself: a file whose member
 * does not hash to it is never used. Checking that hash costs a twentieth
 * of deflating again; inflating to compare would cost a third.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { markUsed, removeUnused, writeFileAtomically } from './blob-cache.ts';

const gzipAsync = promisify(gzip);

const LEVEL = 6;
/**
 * The size from which a file is a member of its own, and kept in the cache:
 * smaller ones compress in well under a millisecond, so a cache file would
 * cost more than it saves (and so would a member each).
 */
export const OWN_MEMBER_FROM_BYTES = 64 * 1024;

export interface ArchiveMemberOptions {
  /** Forge's machine-wide cache; members are not kept without one. */
  cacheDir?: string;
  /** false: compress every member again (and cache the result), as `--no-cache` asks. */
  reuse?: boolean;
}

/** Compresses each segment into its own gzip member, in order. */
export async function gzipMembers(segments: readonly Buffer[], options: ArchiveMemberOptions = {}): Promise<Buffer[]> {
  const dir = options.cacheDir && join(options.cacheDir, 'archive-members');
  let wrote = false;
  const members = await Promise.all(
    segments.map(async (segment) => {
      const file = dir && segment.length >= OWN_MEMBER_FROM_BYTES ? join(dir, `${memberKey(segment)}.gz`) : undefined;
      if (file && options.reuse !== false) {
        const cached = cachedMember(file);
        if (cached) return cached;
      }
      const member = await deflate(segment);
      if (file) wrote = keep(file, member) || wrote;
      return member;
    }),
  );
  if (wrote && dir) removeUnused(dir, '.gz');
  return members;
}

async function deflate(segment: Buffer): Promise<Buffer> {
  const member = await gzipAsync(segment, { level: LEVEL });
  member[9] = 0xff; // the header's OS byte: "unknown" on every platform, so the archive does not depend on the builder's OS
  return member;
}

function memberKey(segment: Buffer): string {
  return createHash('sha256').update(`gzip-member\0${LEVEL}\0${process.versions.zlib}\0`).update(segment).digest('hex');
}

const DIGEST_BYTES = 32;

function cachedMember(file: string): Buffer | undefined {
  try {
    if (!existsSync(file)) return undefined;
    const kept = readFileSync(file);
    const member = kept.subarray(DIGEST_BYTES);
    if (!createHash('sha256').update(member).digest().equals(kept.subarray(0, DIGEST_BYTES))) return undefined;
    markUsed(file);
    return member;
  } catch {
    return undefined;
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
