/**
 * Stage: emit `<agent_id>-<version>.tgz`, the whole bundle in one file.
 * Byte-identical for identical inputs: entries in sorted order, one fixed
 * mtime (SOURCE_DATE_EPOCH, or the epoch), no owner names, fixed modes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TarArchive } from 'archiver';
import type { Artifact, OutputWriter } from './output-writer.ts';

export function archiveName(agentId: string, version: string): string {
  return `${agentId}-${version}.tgz`;
}

export async function emitArchive(name: string, writer: OutputWriter, sourceDateEpoch = 0): Promise<Artifact> {
  const entries = writer.list();
  const date = new Date(sourceDateEpoch * 1000);
  const archive = new TarArchive({ gzip: true, gzipOptions: { level: 9 } });
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    archive.on('end', () => resolve());
    archive.on('error', reject);
  });
  for (const entry of entries) {
    archive.append(readFileSync(join(writer.dir, entry.path)), { name: entry.path, date, mode: entry.mode });
  }
  await archive.finalize();
  await done;
  return writer.write(name, Buffer.concat(chunks));
}
