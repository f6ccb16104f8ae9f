/** Every blob an image is made of, by digest: the base's from the cache, ours from memory. */
import { writeFileSync } from 'node:fs';
import type { BlobCache } from '../blob-cache.ts';
import type { Descriptor } from './media-types.ts';

export interface ImageBlobs {
  /** Config and layers, in manifest order (the manifest itself is separate). */
  descriptors: Descriptor[];
  read(digest: string): Buffer;
  /** Writes the blob to `file`: a cached one is copied from the cache, not read into memory. */
  writeTo(digest: string, file: string): void;
}

export function imageBlobs(cache: BlobCache, fresh: Map<string, Buffer>, descriptors: Descriptor[]): ImageBlobs {
  return {
    descriptors,
    read(digest) {
      const data = fresh.get(digest) ?? cache.get(digest);
      if (!data) throw new Error(`blob ${digest} is neither built nor cached`);
      return data;
    },
    writeTo(digest, file) {
      const data = fresh.get(digest);
      if (data) writeFileSync(file, data);
      else if (!cache.copyTo(digest, file)) throw new Error(`blob ${digest} is neither built nor cached`);
    },
  };
}
