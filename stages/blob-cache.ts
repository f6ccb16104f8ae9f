/**
 * Forge's machine-wide store of blobs kept by digest on disk: image layers,
 * configs and manifests, so a base image is downloaded once and `forge
 * package` works offline afterwards; and the build's runtime cores
 * (runtime-core.ts). Also remembers which digest a tag pointed to when last
 * seen online.
 *
 * Location: Forge's machine-wide cache (defaultCacheDir in forge-paths.ts).
 */
import { accessSync, constants, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCacheDir } from './forge-paths.ts';
import { nodeCrypto } from './node-crypto.ts';

export function sha256Digest(data: Uint8Array): string {
  return `sha256:${nodeCrypto().createHash('sha256').update(data).digest('hex')}`;
}

export class BlobCache {
  /**
   * `readOnly`: a cache this user can read but not write (a CI runner's pre-seeded FORGE_CACHE_DIR), `dir`
   * then a temporary one: what `dir` lacks is read from it, and what is new is written to `dir` only.
   */
  constructor(
    readonly dir: string = defaultCacheDir(),
    private readonly readOnly?: BlobCache,
  ) {}

  private blobPath(digest: string): string {
    const [algorithm, hex] = digest.split(':');
    if (algorithm !== 'sha256' || !/^[a-f0-9]{64}$/.test(hex ?? '')) throw new Error(`unsupported digest ${digest}`);
    return join(this.dir, 'blobs', 'sha256', hex);
  }

  has(digest: string): boolean {
    return existsSync(this.blobPath(digest)) || this.readableBelow(digest);
  }

  get(digest: string): Buffer | undefined {
    const path = this.blobPath(digest);
    if (existsSync(path)) return readFileSync(path);
    return this.readableBelow(digest) ? this.readOnly?.get(digest) : undefined;
  }

  /** Copies the blob to `file` (the kernel copies it: not read into memory); false when it is not cached. */
  copyTo(digest: string, file: string): boolean {
    const path = this.blobPath(digest);
    if (!existsSync(path)) return this.readableBelow(digest) && (this.readOnly?.copyTo(digest, file) ?? false);
    copyFileSync(path, file);
    return true;
  }

  /** Stores data under its digest, refusing data that does not hash to it. */
  put(digest: string, data: Uint8Array): void {
    const actual = sha256Digest(data);
    if (actual !== digest) throw new Error(`blob ${digest} arrived as ${actual}: refusing it`);
    writeFileAtomically(this.blobPath(digest), data);
  }

  /** Whether the read-only cache holds the blob where this user can read it: one it cannot is pulled again, into `dir`. */
  private readableBelow(digest: string): boolean {
    if (!this.readOnly) return false;
    try {
      accessSync(this.readOnly.blobPath(digest), constants.R_OK);
      return true;
    } catch {
      return false;
    }
  }

  remove(digest: string): void {
    rmSync(this.blobPath(digest), { force: true });
  }

  /** The digest a tag resolved to the last time the registry was asked. */
  recalledTag(reference: string): string | undefined {
    const file = this.tagFile(reference);
    if (existsSync(file)) return readFileSync(file, 'utf8').trim();
    try {
      return this.readOnly?.recalledTag(reference);
    } catch {
      return undefined; // one this user cannot read: as if never seen
    }
  }

  rememberTag(reference: string, digest: string): void {
    writeFileAtomically(this.tagFile(reference), digest + '\n');
  }

  private tagFile(reference: string): string {
    return join(this.dir, 'tags', nodeCrypto().createHash('sha256').update(reference).digest('hex'));
  }
}

/** Writes a whole file into place by rename: a reader sees the old file or the new one, never part of either. */
export function writeFileAtomically(path: string, data: Uint8Array | string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  const temp = `${path}.${nodeCrypto().randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temp, data);
  renameSync(temp, path); // concurrent writers of one name write the same bytes
}

/**
 * The build's cache entries (runtime cores, archive members) are touched when
 * a build uses one (at most once a day, so a hit stays a read), and entries no
 * build used for UNUSED_DAYS are removed whenever a new one is written: those
 * of older Forge versions, and of projects and builtins gone, do not pile up.
 */
const UNUSED_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

export function markUsed(entry: string): void {
  try {
    if (Date.now() - statSync(entry).mtimeMs > DAY_MS) utimesSync(entry, new Date(), new Date());
  } catch {
    // A read-only cache still serves.
  }
}

/** Removes the entries in `dir` named `*suffix` that no build used for UNUSED_DAYS; `beforeRemove` sees each first. */
export function removeUnused(dir: string, suffix: string, beforeRemove?: (entry: string) => void): void {
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(suffix)) continue;
    const unused = join(dir, name);
    try {
      if (Date.now() - statSync(unused).mtimeMs < UNUSED_DAYS * DAY_MS) continue;
      beforeRemove?.(unused);
      rmSync(unused, { force: true });
    } catch {
      // Another build removed it first.
    }
  }
}
