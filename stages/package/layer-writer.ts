/**
 * One image layer from a list of entries, byte-identical for identical
 * entries: sorted paths, parent directories made explicit, one fixed mtime,
 * numeric owners without names, fixed modes, and gzip with no timestamp and
 * a fixed OS byte. Returns the compressed blob with its digest and the
 * uncompressed tar's digest (the config's diff_id).
 */
import tarStream from 'tar-stream';
import { sha256Digest } from '../blob-cache.ts';
import { portableGzip } from '../portable-gzip.ts';
import { OCI_LAYER_GZIP, type Descriptor } from './media-types.ts';

export interface LayerEntry {
  /** Absolute path in the image (/opt/agent/runtime.mjs); a trailing slash is not needed for directories. */
  path: string;
  type: 'file' | 'directory' | 'symlink';
  data?: Uint8Array;
  linkname?: string;
  mode?: number;
  uid?: number;
  gid?: number;
}

export interface Layer {
  blob: Buffer;
  descriptor: Descriptor;
  diffId: string;
  /** Uncompressed size, for the summary. */
  size: number;
}

export async function writeLayer(entries: readonly LayerEntry[], mtimeSeconds = 0): Promise<Layer> {
  const byPath = new Map<string, LayerEntry>();
  for (const entry of entries) {
    const path = entry.path.replace(/^\/+|\/+$/g, '');
    if (!path || path.split('/').includes('..')) throw new Error(`a layer entry cannot be named "${entry.path}"`);
    byPath.set(path, { ...entry, path });
    // Parents first, root-owned, unless an entry says otherwise.
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (!byPath.has(parent)) byPath.set(parent, { path: parent, type: 'directory' });
    }
  }
  const mtime = new Date(mtimeSeconds * 1000);
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', resolve);
    pack.on('error', reject);
  });
  for (const path of [...byPath.keys()].sort()) {
    const e = byPath.get(path)!;
    const common = { mtime, uid: e.uid ?? 0, gid: e.gid ?? 0, uname: '', gname: '' };
    if (e.type === 'directory') pack.entry({ ...common, name: `${path}/`, type: 'directory', mode: e.mode ?? 0o755 });
    else if (e.type === 'symlink') pack.entry({ ...common, name: path, type: 'symlink', linkname: e.linkname!, mode: e.mode ?? 0o777 });
    else {
      const data = Buffer.from(e.data ?? new Uint8Array());
      pack.entry({ ...common, name: path, type: 'file', size: data.length, mode: e.mode ?? 0o644 }, data);
    }
  }
  pack.finalize();
  await ended;
  const tar = Buffer.concat(chunks);
  const blob = await portableGzip(tar, 6);
  const digest = sha256Digest(blob);
  return { blob, descriptor: { mediaType: OCI_LAYER_GZIP, digest, size: blob.length }, diffId: sha256Digest(tar), size: tar.length };
}
