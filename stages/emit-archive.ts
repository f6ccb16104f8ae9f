/**
 * Stage: emit `<agent_id>-<version>.tgz`, the whole bundle in one file.
 * Byte-identical for identical inputs: entries in sorted order, one fixed
 * mtime (SOURCE_DATE_EPOCH, or the epoch), owner 0:0 with no names, fixed
 * modes, and a gzip header without a timestamp.
 *
 * The tar stream is tar-stream, the engine archiver uses for tar; driving it
 * directly skips archiver's per-entry queue, which cost more than the
 * compression itself.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Artifact, OutputWriter } from './output-writer.ts';

const gzipAsync = promisify(gzip);

let tarStream: Promise<typeof import('tar-stream')> | undefined;

/** Starts loading the tar engine early (the pipeline does it while esbuild works). */
export function preloadArchiver(): void {
  tarStream ??= import('tar-stream');
}

export function archiveName(agentId: string, version: string): string {
  return `${agentId}-${version}.tgz`;
}

export async function emitArchive(name: string, writer: OutputWriter, sourceDateEpoch = 0): Promise<Artifact> {
  preloadArchiver();
  // tar-stream is CommonJS: its exports are the namespace under Node, `default` in a bundle.
  const loaded = (await tarStream!) as typeof import('tar-stream') & { default?: typeof import('tar-stream') };
  const tar = typeof loaded.pack === 'function' ? loaded : loaded.default!;
  const mtime = new Date(sourceDateEpoch * 1000);
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', resolve);
    pack.on('error', reject);
  });
  for (const entry of writer.list()) {
    const data = writer.read(entry.path);
    pack.entry({ name: entry.path, size: data.length, mode: entry.mode, mtime, uid: 0, gid: 0, uname: '', gname: '', type: 'file' }, data);
  }
  pack.finalize();
  await ended;
  // Compression runs on libuv's thread pool, off the main thread.
  const archive = await gzipAsync(Buffer.concat(chunks), { level: 6 });
  return writer.write(name, archive);
}
