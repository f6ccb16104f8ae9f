/**
 * The index forge package reads a base's file system from: layers applied
 * with OCI's whiteouts (which remove only what lower layers had, wherever
 * they stand in the layer's tar), and no index at all of a base whose layer
 * is not in the cache. Layers are tars written here in the order a test
 * needs (writeLayer sorts its entries).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import tarStream from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { BlobCache, sha256Digest } from '../../../stages/blob-cache.ts';
import type { BaseImage } from '../../../stages/package/base-image.ts';
import { BaseFiles } from '../../../stages/package/base-files.ts';
import { OCI_LAYER_GZIP } from '../../../stages/package/media-types.ts';
import { tempDir } from '../../helpers/project.ts';

type TarEntry = { name: string; type?: 'file' | 'directory' };

/** A gzipped tar of empty entries, in the order given. */
async function layerOf(entries: TarEntry[]): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve) => pack.on('end', resolve));
  for (const e of entries) pack.entry({ name: e.name, type: e.type ?? 'file', mode: 0o755, size: 0 }, Buffer.alloc(0));
  pack.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

/** A base of these layers, with the blobs of `stored` (default: all) in a fresh cache. */
function baseOf(layers: Buffer[], stored: number[] = layers.map((_, i) => i)): { base: BaseImage; cache: BlobCache } {
  const cache = new BlobCache(tempDir('forge-base-files-'));
  const descriptors = layers.map((blob) => ({ mediaType: OCI_LAYER_GZIP, digest: sha256Digest(blob), size: blob.length }));
  for (const i of stored) cache.put(descriptors[i].digest, layers[i]);
  const base: BaseImage = {
    reference: { registry: '127.0.0.1:5000', repository: 'base', tag: '1' },
    digest: sha256Digest(Buffer.concat(layers)),
    config: { architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [] } },
    layers: descriptors,
    source: 'registry',
  };
  return { base, cache };
}

describe('BaseFiles', () => {
  it("applies a layer's whiteouts before its own entries, wherever they stand in its tar", async () => {
    const lower = await layerOf([{ name: 'etc/app', type: 'directory' }, { name: 'etc/app/old.conf' }, { name: 'usr/bin/gone' }, { name: 'usr/bin/kept' }]);
    // The opaque whiteout and the plain one come after the layer's entries in the same directories.
    const upper = await layerOf([{ name: 'etc/app', type: 'directory' }, { name: 'etc/app/new.conf' }, { name: 'usr/bin/added' }, { name: 'etc/app/.wh..wh..opq' }, { name: 'usr/bin/.wh.gone' }]);
    const { base, cache } = baseOf([lower, upper]);
    const files = await BaseFiles.of(base, cache);
    expect(files.resolve('/etc/app/new.conf')?.type).toBe('file');
    expect(files.resolve('/etc/app/old.conf')).toBeUndefined();
    expect(files.isDirectory('/etc/app')).toBe(true);
    expect(files.findProgram('added', ['/usr/bin'])).toBe('/usr/bin/added');
    expect(files.findProgram('kept', ['/usr/bin'])).toBe('/usr/bin/kept');
    expect(files.findProgram('gone', ['/usr/bin'])).toBeUndefined();
  });

  it('refuses to index a base whose layer is not in the cache, and keeps no index of it', async () => {
    const first = await layerOf([{ name: 'usr/bin/bwrap' }]);
    const second = await layerOf([{ name: 'usr/bin/python3' }]);
    const { base, cache } = baseOf([first, second], [0]);
    await expect(BaseFiles.of(base, cache)).rejects.toThrow(`its layer ${base.layers[1].digest} is not in the cache`);
    const facts = join(cache.dir, 'facts');
    expect(existsSync(facts) ? readdirSync(facts) : []).toEqual([]);
    // Once the layer is there, the whole base is indexed.
    cache.put(base.layers[1].digest, second);
    const files = await BaseFiles.of(base, cache);
    expect(files.findProgram('python3', ['/usr/bin'])).toBe('/usr/bin/python3');
    expect(files.findProgram('bwrap', ['/usr/bin'])).toBe('/usr/bin/bwrap');
  });
});
