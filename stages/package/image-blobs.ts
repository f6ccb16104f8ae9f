/** Every blob an image is made of, by digest: the base's from the cache, ours from memory. */
import type { BlobCache } from '../blob-cache.ts';
import type { Descriptor } from './media-types.ts';

export interface ImageBlobs {
  /** Config and layers, in manifest order (the manifest itself is separate). */
  descriptors: Descriptor[];
  read(digest: string): Buffer;
}

export function imageBlobs(cache: BlobCache, fresh: Map<string, Buffer>, descriptors: Descriptor[]): ImageBlobs {
  return {
    descriptors,
    read(digest) {
      const data = fresh.get(digest) ?? cache.get(digest);
      if (!data) throw new Error(`blob ${digest} is neither built nor cached`);
      return data;
    },
  };
}
