/**
 * The archive's tar bytes are written by tar-entries.ts: the same bytes
 * tar-stream's pack() writes for the same files (the archive of a project
 * did not change when it replaced tar-stream), for the paths a ustar header
 * holds and for those that need a pax header before them.
 */
import tarStream from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { tarEntries, type TarFile } from '../../stages/tar-entries.ts';

const END_OF_ARCHIVE = 1024;

/** tar-stream's archive of the files, without its two zero blocks. */
async function tarStreamEntries(files: readonly TarFile[], mtime: Date): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', () => resolve());
    pack.on('error', reject);
  });
  for (const { name, mode, data } of files) pack.entry({ name, size: data.length, mode, mtime, uid: 0, gid: 0, uname: '', gname: '', type: 'file' }, data);
  pack.finalize();
  await ended;
  const whole = Buffer.concat(chunks);
  return whole.subarray(0, whole.length - END_OF_ARCHIVE);
}

const files: TarFile[] = [
  { name: 'agent.json', mode: 0o644, data: Buffer.from('{"name":"agent"}\n') },
  { name: 'bin/start.sh', mode: 0o755, data: Buffer.from('#!/bin/sh\nexec node runtime.mjs\n') },
  { name: 'empty.txt', mode: 0o644, data: Buffer.alloc(0) },
  { name: 'block.bin', mode: 0o644, data: Buffer.alloc(1024, 7) },
  // Longer than the name field: split into prefix and name.
  { name: `tools/${'deep/'.repeat(25)}tool.py`, mode: 0o644, data: Buffer.from('def execute(args):\n    return 1\n') },
  // No slash to split at, longer than its prefix can hold, or not ASCII: a pax header carries the path.
  { name: `tools/${'t'.repeat(120)}.py`, mode: 0o644, data: Buffer.from('x = 1\n') },
  { name: `${'p/'.repeat(90)}tool.ts`, mode: 0o644, data: Buffer.from('export {};\n') },
  { name: 'tools/größe.py', mode: 0o644, data: Buffer.from('"""Größe."""\n') },
  { name: `tools/${'ü'.repeat(600)}.py`, mode: 0o644, data: Buffer.alloc(700, 1) },
];

describe('tar entries', () => {
  it('are the bytes tar-stream writes, at the epoch and at a SOURCE_DATE_EPOCH', async () => {
    for (const mtime of [new Date(0), new Date(1_700_000_000_000)]) {
      const written = tarEntries(files, mtime);
      const expected = await tarStreamEntries(files, mtime);
      expect(written.length).toBe(expected.length);
      expect(written.equals(expected)).toBe(true);
    }
  });

  it("are each file's header, data and padding, block-aligned", () => {
    for (const file of files) expect(tarEntries([file], new Date(0)).length % 512).toBe(0);
    expect(tarEntries([], new Date(0)).length).toBe(0);
  });
});
