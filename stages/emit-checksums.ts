/**
 * Stage: emit build-manifest.json (what was built: files, sizes, tool
 * counts) and checksums.json (sha256 of every artifact, so a deployment can
 * verify the bundle it got).
 */
import type { AgentManifest } from '../runtime/manifest.ts';
import { categoryCounts } from './emit-manifest.ts';
import type { OutputWriter } from './output-writer.ts';

export interface BuildFacts {
  manifest: AgentManifest;
  strippedDevTools: number;
  /** SOURCE_DATE_EPOCH, when the builder set one; otherwise no time is recorded. */
  sourceDateEpoch?: number;
}

export function emitBuildManifest(facts: BuildFacts, writer: OutputWriter): void {
  const { manifest } = facts;
  const buildManifest: Record<string, unknown> = {
    forge_version: manifest.build.forge_version,
    agent: { id: manifest.agent_id, version: manifest.version },
    mode: manifest.build.mode,
    tools: { total: manifest.tools.length, by_category: categoryCounts(manifest), dev_tools_stripped: facts.strippedDevTools },
    files: writer.list().map(({ path, size }) => ({ path, size })),
  };
  if (manifest.runtime) buildManifest.base_image = baseImageRecord(manifest.runtime.image);
  if (facts.sourceDateEpoch !== undefined) buildManifest.built_at = new Date(facts.sourceDateEpoch * 1000).toISOString();
  writer.writeJson('build-manifest.json', buildManifest);
}

export function emitChecksums(writer: OutputWriter): void {
  const files = Object.fromEntries(writer.list().map((a) => [a.path, a.sha256]));
  writer.writeJson('checksums.json', { algorithm: 'sha256', files });
}

/** The container's base image as the build manifest records it: the digest too when the reference pins one. */
export function baseImageRecord(image: string): { ref: string; digest?: string } {
  const at = image.indexOf('@sha256:');
  return at === -1 ? { ref: image } : { ref: image.slice(0, at), digest: image.slice(at + 1) };
}
