/**
 * Output: push to a registry. Blobs the registry already holds are skipped
 * (HEAD first), then the manifest is put under the tag.
 */
import type { ImageBlobs } from './image-blobs.ts';
import type { ImageReference } from './image-reference.ts';
import type { Descriptor } from './media-types.ts';
import { RegistryClient, RegistryError } from './registry-client.ts';

export interface PushReport {
  uploaded: number;
  skipped: number;
  digest: string;
}

export async function pushImage(target: ImageReference, manifest: Buffer, manifestDescriptor: Descriptor, blobs: ImageBlobs, env: NodeJS.ProcessEnv = process.env): Promise<PushReport> {
  const client = new RegistryClient(target.registry, env);
  let uploaded = 0;
  let skipped = 0;
  for (const d of blobs.descriptors) {
    if (await client.hasBlob(target.repository, d.digest)) {
      skipped++;
      continue;
    }
    await client.putBlob(target.repository, d.digest, blobs.read(d.digest));
    uploaded++;
  }
  const stated = await client.putManifest(target.repository, target.tag ?? manifestDescriptor.digest, manifestDescriptor.mediaType, manifest);
  if (stated && stated !== manifestDescriptor.digest) throw new RegistryError('FORGE_REGISTRY_ERROR', `${target.registry} stored the manifest as ${stated}, not ${manifestDescriptor.digest}`);
  return { uploaded, skipped, digest: manifestDescriptor.digest };
}
