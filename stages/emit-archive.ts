/**
 * Stage: emit `<agent_id>-<version>.tgz`, the whole bundle in one file.
 * Byte-identical for identical inputs: entries in sorted order, one fixed
 * mtime (SOURCE_DATE_EPOCH, or the epoch), owner 0:0 with no names, fixed
 * modes, and gzip headers without a timestamp. Each file the builds on a
 * machine share (the runtime core, vendor/) is a gzip member of its own,
 * taken from Forge's cache (archive-members.ts); the project's files between
 * two of them share one.
 *
 * The tar bytes are tar-stream's, the engine archiver uses for tar; driving
 * it directly skips archiver's per-entry queue, which cost more than the
 * compression itself.
 */
import { gzipMembers, type ArchiveMemberOptions, type ArchiveSegment } from './archive-members.ts';
import type { Artifact, OutputWriter } from './output-writer.ts';

type TarStream = typeof import('tar-stream');
let tarStream: Promise<TarStream> | undefined;

/** Starts loading the tar engine early (the pipeline does it while esbuild works). */
export function preloadArchiver(): void {
  tarStream ??= import('tar-stream');
}

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
  preloadArchiver();
  // tar-stream is CommonJS: its exports are the namespace under Node, `default` in a bundle.
  const loaded = (await tarStream!) as TarStream & { default?: TarStream };
  const tar = typeof loaded.pack === 'function' ? loaded : loaded.default!;
  const mtime = new Date(sourceDateEpoch * 1000);
  // A shared file is a member of its own (one the cache keeps); the project's files between two shared ones share one.
  const shared = new Set(options.shared);
  const groups: { files: ArchiveFile[]; shared: boolean }[] = [];
  let own: ArchiveFile[] | undefined;
  for (const entry of writer.list()) {
    const data = writer.read(entry.path);
    const file: ArchiveFile = { header: { name: entry.path, size: data.length, mode: entry.mode, mtime, uid: 0, gid: 0, uname: '', gname: '', type: 'file' }, data };
    if (shared.has(entry.path)) {
      groups.push({ files: [file], shared: true });
      own = undefined;
    } else if (own) own.push(file);
    else groups.push({ files: (own = [file]), shared: false });
  }
  const segments: ArchiveSegment[] = await Promise.all(groups.map(async (group) => ({ bytes: await tarSegment(tar, group.files), shared: group.shared })));
  segments.push({ bytes: Buffer.alloc(END_OF_ARCHIVE), shared: false });
  return writer.write(name, Buffer.concat(await gzipMembers(segments, options)));
}

interface ArchiveFile {
  header: Parameters<import('tar-stream').Pack['entry']>[0];
  data: Buffer;
}

/** The tar bytes of some entries (headers, data, padding): an archive of them without its end. */
async function tarSegment(tar: TarStream, files: readonly ArchiveFile[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', resolve);
    pack.on('error', reject);
  });
  for (const { header, data } of files) pack.entry(header, data);
  pack.finalize();
  await ended;
  const whole = Buffer.concat(chunks);
  return whole.subarray(0, whole.length - END_OF_ARCHIVE);
}
