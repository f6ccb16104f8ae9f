/**
 * Which Python a base image has: its layers (from the blob cache) are read
 * for usr/bin/python3.N or usr/local/bin/python3.N. The answer is kept per
 * base digest, so a base is scanned once.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import tarStream from 'tar-stream';
import type { BaseImage } from './base-image.ts';
import type { BlobCache } from '../blob-cache.ts';

export interface BasePython {
  /** Absolute path in the image, e.g. /usr/local/bin/python3.12. */
  executable: string;
  /** "3.12" */
  version: string;
}

const PYTHON = /^(usr\/(?:local\/)?bin)\/python(3\.\d+)$/;

export async function findBasePython(base: BaseImage, cache: BlobCache): Promise<BasePython | undefined> {
  const factsFile = join(cache.dir, 'facts', `${base.digest.replace(':', '-')}.python.json`);
  if (existsSync(factsFile)) return (JSON.parse(readFileSync(factsFile, 'utf8')) as { python: BasePython | null }).python ?? undefined;
  let found: BasePython | undefined;
  for (const layer of base.layers) {
    const data = cache.get(layer.digest);
    if (!data) continue;
    const hit = await scanLayer(data, layer.mediaType.endsWith('gzip'));
    if (hit) found = hit; // later layers win
  }
  mkdirSync(join(factsFile, '..'), { recursive: true });
  writeFileSync(factsFile, JSON.stringify({ python: found ?? null }));
  return found;
}

function scanLayer(data: Buffer, gzipped: boolean): Promise<BasePython | undefined> {
  return new Promise((resolve, reject) => {
    let found: BasePython | undefined;
    const extract = tarStream.extract();
    extract.on('entry', (header, stream, next) => {
      const m = PYTHON.exec(header.name.replace(/^\.?\//, ''));
      if (m && (header.type === 'file' || header.type === 'symlink' || header.type === 'link')) found = { executable: `/${m[1]}/python${m[2]}`, version: m[2] };
      stream.on('end', next);
      stream.resume();
    });
    extract.on('finish', () => resolve(found));
    extract.on('error', reject);
    const source = Readable.from([data]);
    (gzipped ? source.pipe(createGunzip()) : source).on('error', reject).pipe(extract);
  });
}
