/**
 * What a base image's file system holds, read from its layers without
 * unpacking them: every path with its type, mode and link target, the
 * layers applied in order (OCI whiteouts remove what lower layers put
 * there, never the entries of their own layer). Questions are asked of it
 * the way the kernel would answer them: links are followed (`/bin` → `usr/bin` in a merged-/usr image), and a
 * program is looked for in PATH's directories.
 *
 * The index is kept per base digest in the blob cache's facts, so a base is
 * read once.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import tarStream from 'tar-stream';
import { ForgeError } from '../../runtime/diagnostics.ts';
import type { BaseImage } from './base-image.ts';
import type { BlobCache } from '../blob-cache.ts';
import { formatImageReference } from './image-reference.ts';

/** 'f' file, 'd' directory, 'l' symlink (target), 'h' hard link (target, a path in the image). */
type Entry = { t: 'f' | 'd'; m: number } | { t: 'l' | 'h'; to: string };

/**
 * Bumped when the index's shape or making changes, so an older fact file is not misread
 * (2: whiteouts before the layer's entries, and no index of a base with a layer missing).
 */
const FORMAT = 2;

export class BaseFiles {
  private constructor(private readonly entries: Map<string, Entry>) {}

  static async of(base: BaseImage, cache: BlobCache): Promise<BaseFiles> {
    const factsFile = join(cache.dir, 'facts', `${base.digest.replace(':', '-')}.files.json`);
    if (existsSync(factsFile)) {
      const facts = JSON.parse(readFileSync(factsFile, 'utf8')) as { format: number; entries: [string, Entry][] };
      if (facts.format === FORMAT) return new BaseFiles(new Map(facts.entries));
    }
    const entries = new Map<string, Entry>();
    for (const layer of base.layers) {
      const data = cache.get(layer.digest);
      // Without a layer the index would be wrong, and kept for good: stop instead.
      if (!data) {
        throw new ForgeError(
          'FORGE_PACKAGE_BASE',
          `the base image ${formatImageReference({ ...base.reference, digest: undefined })}@${base.digest} cannot be checked: its layer ${layer.digest} is not in the cache (${cache.dir})`,
          'run forge package again where the registry can be reached, to download the layer',
        );
      }
      await applyLayer(entries, data, layer.mediaType.endsWith('gzip'));
    }
    mkdirSync(join(factsFile, '..'), { recursive: true });
    writeFileSync(factsFile, JSON.stringify({ format: FORMAT, entries: [...entries] }));
    return new BaseFiles(entries);
  }

  /** For tests and callers that already know the files. */
  static fromEntries(entries: Iterable<[string, Entry]>): BaseFiles {
    return new BaseFiles(new Map(entries));
  }

  /** What an absolute path is once every link on the way is followed; undefined when it does not exist. */
  resolve(path: string): { path: string; type: 'file' | 'directory'; mode: number } | undefined {
    let parts = path.split('/').filter(Boolean);
    let done: string[] = [];
    for (let hops = 0; parts.length; ) {
      const current = `/${[...done, parts[0]].join('/')}`;
      const entry = this.entries.get(current.slice(1));
      if (!entry) return undefined;
      if (entry.t === 'l' || entry.t === 'h') {
        if (++hops > 40) return undefined;
        const target = entry.t === 'h' || entry.to.startsWith('/') ? `/${entry.to.replace(/^\.?\//, '')}` : posix.join('/', ...done, entry.to);
        parts = [...target.split('/').filter(Boolean), ...parts.slice(1)];
        done = [];
        continue;
      }
      done.push(parts.shift()!);
      if (parts.length && entry.t !== 'd') return undefined;
      if (!parts.length) return { path: current, type: entry.t === 'd' ? 'directory' : 'file', mode: (entry as { m: number }).m };
    }
    return { path: '/', type: 'directory', mode: 0o755 };
  }

  /** The first executable file named `name` in `dirs` (an absolute `name` is looked at alone). */
  findProgram(name: string, dirs: readonly string[]): string | undefined {
    for (const candidate of name.startsWith('/') ? [name] : dirs.map((dir) => posix.join(dir, name))) {
      const found = this.resolve(candidate);
      if (found?.type === 'file' && (found.mode & 0o111) !== 0) return candidate;
    }
    return undefined;
  }

  isDirectory(path: string): boolean {
    return this.resolve(path)?.type === 'directory';
  }
}

/** PATH's directories as the image's config sets them (the default of Docker and containerd when it does not). */
export function imagePath(base: BaseImage): string[] {
  const line = (base.config.config?.Env ?? []).find((e) => e.startsWith('PATH='));
  return (line ? line.slice(5) : '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin').split(':').filter((d) => d.startsWith('/'));
}

/**
 * One layer over the index. Its whiteouts remove what lower layers had, and only that (OCI
 * image spec, "Whiteouts"): they are applied before any of the layer's own entries go in,
 * wherever they stand in the tar — an opaque whiteout after the entries of its directory
 * leaves them.
 */
async function applyLayer(entries: Map<string, Entry>, data: Buffer, gzipped: boolean): Promise<void> {
  const { whiteouts, added } = await readLayer(data, gzipped);
  for (const whiteout of whiteouts) {
    if (whiteout.opaque) removeUnder(entries, whiteout.path);
    else {
      entries.delete(whiteout.path);
      removeUnder(entries, whiteout.path);
    }
  }
  for (const [path, entry] of added) {
    // A layer may leave its parent directories implicit.
    for (let up = posix.dirname(path); up !== '.' && !entries.has(up); up = posix.dirname(up)) entries.set(up, { t: 'd', m: 0o755 });
    if (entry) entries.set(path, entry);
    else entries.delete(path); // a device or fifo: nothing the checks look for
  }
}

/** A layer's whiteouts (`opaque`: the directory's lower contents) and its entries in tar order. */
function readLayer(data: Buffer, gzipped: boolean): Promise<{ whiteouts: { path: string; opaque: boolean }[]; added: [string, Entry | undefined][] }> {
  const whiteouts: { path: string; opaque: boolean }[] = [];
  const added: [string, Entry | undefined][] = [];
  return new Promise((resolve, reject) => {
    const extract = tarStream.extract();
    extract.on('entry', (header, stream, next) => {
      const path = header.name.replace(/^\.?\/+/, '').replace(/\/+$/, '');
      const name = posix.basename(path);
      const dir = posix.dirname(path) === '.' ? '' : posix.dirname(path);
      if (name === '.wh..wh..opq') whiteouts.push({ path: dir, opaque: true });
      else if (name.startsWith('.wh.')) whiteouts.push({ path: dir ? `${dir}/${name.slice(4)}` : name.slice(4), opaque: false });
      else if (path) {
        const mode = header.mode ?? 0o644;
        if (header.type === 'directory') added.push([path, { t: 'd', m: mode }]);
        else if (header.type === 'symlink') added.push([path, { t: 'l', to: header.linkname ?? '' }]);
        else if (header.type === 'link') added.push([path, { t: 'h', to: header.linkname ?? '' }]);
        else if (header.type === 'file' || header.type === 'contiguous-file') added.push([path, { t: 'f', m: mode }]);
        else added.push([path, undefined]);
      }
      stream.on('end', next);
      stream.resume();
    });
    extract.on('finish', () => resolve({ whiteouts, added }));
    extract.on('error', reject);
    const source = Readable.from([data]);
    (gzipped ? source.pipe(createGunzip()) : source).on('error', reject).pipe(extract);
  });
}

function removeUnder(entries: Map<string, Entry>, dir: string): void {
  const prefix = dir ? `${dir}/` : '';
  for (const path of [...entries.keys()]) if (path.startsWith(prefix) && path !== dir) entries.delete(path);
}
