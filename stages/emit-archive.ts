/**
 * Stage: emit `<agent_id>-<version>.tgz`, the whole bundle in one file.
 * Byte-identical for identical inputs: entries in sorted order, one fixed
 * mtime (SOURCE_DATE_EPOCH, or the epoch), owner 0:0 with no names, fixed
 * modes, and gzip headers without a timestamp. Each large file is a gzip
 * member of its own, so those the builds on a machine share come from
 * Forge's cache (archive-members.ts); the small files between them share one.
 *
 * The tar bytes are tar-stream's, the engine archiver uses for tar; driving
 * it directly skips archiver's per-entry queue, which cost more than the
 * compression itself.
 */
import { gzipMembers, OWN_MEMBER_FROM_BYTES, type ArchiveMemberOptions } from './archive-members.ts';
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

export async function emitArchive(name: string, writer: OutputWriter, sourceDateEpoch = 0, members: ArchiveMemberOptions = {}): Promise<Artifact> {
  preloadArchiver();
  // tar-stream is CommonJS: its exports are the namespace under Node, `default` in a bundle.
  const loaded = (await tarStream!) as TarStream & { default?: TarStream };
  const tar = typeof loaded.pack === 'function' ? loaded : loaded.default!;
  const mtime = new Date(sourceDateEpoch * 1000);
  // A large file is a member of its own (one the cache can keep); the small files between two large ones share one.
  const groups: ArchiveFile[][] = [];
  let small: ArchiveFile[] | undefined;
  for (const entry of writer.list()) {
    const data = writer.read(entry.path);
    const file: ArchiveFile = { header: { name: entry.path, size: data.length, mode: entry.mode, mtime, uid: 0, gid: 0, uname: '', gname: '', type: 'file' }, data };
    if (data.length >= OWN_MEMBER_FROM_BYTES) {
      groups.push([file]);
      small = undefined;
    } else if (small) small.push(file);
    else groups.push((small = [file]));
  }
  const segments = await Promise.all(groups.map((files) => tarSegment(tar, files)));
  segments.push(Buffer.alloc(END_OF_ARCHIVE));
  return writer.write(name, Buffer.concat(await gzipMembers(segments, members)));
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
