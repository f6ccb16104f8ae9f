/**
 * Stage: emit `<agent_id>-<version>.tgz`, the whole bundle in one file.
 * Byte-identical for identical inputs: entries in sorted order, one fixed
 * mtime (SOURCE_DATE_EPOCH, or the epoch), owner 0:0 with no names, fixed
 * modes, and gzip headers without a timestamp. Each file the builds on a
 * machine share (the runtime core, vendor/) is a gzip member of its own,
 * taken from Forge's cache (archive-members.ts); the project's files between
 * two of them share one.
 */
import { gzipMembers, type ArchiveMemberOptions, type ArchiveSegment } from './archive-members.ts';
import type { Artifact, OutputWriter } from './output-writer.ts';
import { tarEntries, type TarFile } from './tar-entries.ts';

export function archiveName(agentId: string, version: string): string {
  return `${agentId}-${version}.tgz`;
}

/** The end of a tar archive: two zero blocks. */
const END_OF_ARCHIVE = 1024;

export interface ArchiveOptions extends ArchiveMemberOptions {
  /** The output's paths that every build on this machine shares (the runtime core's files). */
  shared?: readonly string[];
}

export async function emitArchive(name: string, writer: OutputWriter, sourceDateEpoch = 0, options: ArchiveOptions = {}): Promise<Artifact> {
  const mtime = new Date(sourceDateEpoch * 1000);
  // A shared file is a member of its own (one the cache keeps); the project's files between two shared ones share one.
  const shared = new Set(options.shared);
  const groups: { files: TarFile[]; shared: boolean }[] = [];
  let own: TarFile[] | undefined;
  for (const entry of writer.list()) {
    const file: TarFile = { name: entry.path, mode: entry.mode, data: writer.read(entry.path) };
    if (shared.has(entry.path)) {
      groups.push({ files: [file], shared: true });
      own = undefined;
    } else if (own) own.push(file);
    else groups.push({ files: (own = [file]), shared: false });
  }
  const segments: ArchiveSegment[] = groups.map((group) => ({ bytes: tarEntries(group.files, mtime), shared: group.shared }));
  segments.push({ bytes: Buffer.alloc(END_OF_ARCHIVE), shared: false });
  return writer.write(name, Buffer.concat(await gzipMembers(segments, options)));
}
