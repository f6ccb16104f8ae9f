/** The OCI and Docker media types an image is made of. */
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';
export const DOCKER_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_LAYER_GZIP = 'application/vnd.docker.image.rootfs.diff.tar.gzip';

export const MANIFEST_ACCEPT = [OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST].join(', ');

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { architecture: string; os: string; variant?: string };
  annotations?: Record<string, string>;
}

export interface ImageManifest {
  schemaVersion: 2;
  mediaType?: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

export interface ImageIndex {
  schemaVersion: 2;
  mediaType?: string;
  manifests: Descriptor[];
}

/** A Docker layer's bytes are an OCI gzip layer: only the name differs. */
export function ociLayerType(mediaType: string): string {
  if (mediaType === DOCKER_LAYER_GZIP) return OCI_LAYER_GZIP;
  if (mediaType === 'application/vnd.docker.image.rootfs.diff.tar') return 'application/vnd.oci.image.layer.v1.tar';
  return mediaType;
}

export function isIndex(mediaType: string | undefined): boolean {
  return mediaType === OCI_INDEX || mediaType === DOCKER_LIST;
}
