/**
 * Output: an OCI image layout (a directory with oci-layout, index.json and
 * blobs/sha256/…), or the same layout as one tar file (an "oci-archive",
 * what skopeo, podman and docker load read). The tar is deterministic too.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tarStream from 'tar-stream';
import type { ImageBlobs } from './image-blobs.ts';
import { OCI_INDEX, type Descriptor } from './media-types.ts';

/** The files that name the blobs: oci-layout, index.json and the manifest (the config and layers are the caller's). */
function indexFiles(manifest: Buffer, manifestDescriptor: Descriptor, refName: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  files.set('oci-layout', Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' })));
  const index = { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ ...manifestDescriptor, annotations: { 'org.opencontainers.image.ref.name': refName } }] };
  files.set('index.json', Buffer.from(JSON.stringify(index)));
  files.set(blobPath(manifestDescriptor.digest), manifest);
  return files;
}

function blobPath(digest: string): string {
  return `blobs/${digest.replace(':', '/')}`;
}

/** The layout's files; the blobs (the base's layers are tens of MB) copied from Forge's cache, not read into memory. */
export function writeOciDirectory(dir: string, manifest: Buffer, manifestDescriptor: Descriptor, blobs: ImageBlobs, refName: string): void {
  const write = (path: string, data: (file: string) => void) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    data(join(dir, path));
  };
  for (const d of blobs.descriptors) write(blobPath(d.digest), (file) => blobs.writeTo(d.digest, file));
  // Then the manifest, index.json and oci-layout, which name them.
  for (const [path, data] of indexFiles(manifest, manifestDescriptor, refName)) write(path, (file) => writeFileSync(file, data));
}

export async function ociArchive(manifest: Buffer, manifestDescriptor: Descriptor, blobs: ImageBlobs, refName: string): Promise<Buffer> {
  const files = indexFiles(manifest, manifestDescriptor, refName);
  for (const d of blobs.descriptors) files.set(blobPath(d.digest), blobs.read(d.digest));
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', resolve);
    pack.on('error', reject);
  });
  const mtime = new Date(0);
  const dirs = new Set<string>(['blobs', 'blobs/sha256']);
  for (const d of [...dirs].sort()) pack.entry({ name: `${d}/`, type: 'directory', mode: 0o755, mtime, uid: 0, gid: 0 });
  for (const path of [...files.keys()].sort()) pack.entry({ name: path, type: 'file', mode: 0o644, mtime, uid: 0, gid: 0, size: files.get(path)!.length }, files.get(path)!);
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}
