/**
 * What ripgrep reports is confirmed before anything of it is shown.
 *
 * rg walks by path from the directory it was started in, and that start (the
 * spawn's chdir, or bwrap --chdir) follows a symlink swapped in after the
 * tool checked the path; so does its walk below. A hit such as
 * `a/secret.txt:1` can therefore come from a file outside the work dir, and
 * a check of the name afterwards passes once `a` is swapped back. So each
 * hit's file is opened again through verified descriptors (no symlink on the
 * way, inside the work dir, not in the state dir, hard links as configured:
 * guard/verified-entries.ts) and the hit is kept only if that file holds the
 * very line rg reported, byte for byte, at that number. The text shown,
 * context lines included, is read from that file, never taken from rg.
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { PathGuard } from '../../../guard/path-guard.ts';
import { lookThroughVerifiedDirectories } from '../../../guard/verified-entries.ts';
import { openForRead } from '../../../guard/verified-open.ts';
import { clipLine, withContext, type GrepMatch, type GrepQuery } from './grep-query.ts';

/** One matching line as ripgrep reported it. */
export interface RipgrepHit {
  /** Relative to the search root, with forward slashes. */
  path: string;
  line: number;
  /** lineDigest() of the line's bytes as rg read them, terminator included. */
  digest: string;
}

interface ReadLine {
  digest: string;
  text: string;
}

export function lineDigest(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64');
}

/** The hits a verified read of their file confirms, as matches (in the hits' order) with context from that read. */
export async function confirmHits(query: GrepQuery, hits: readonly RipgrepHit[]): Promise<GrepMatch[]> {
  const guard = new PathGuard(query.workDir);
  const byFile = new Map<string, RipgrepHit[]>();
  for (const hit of hits) {
    const same = byFile.get(hit.path);
    if (same) same.push(hit);
    else byFile.set(hit.path, [hit]);
  }
  const files = [...byFile.keys()];
  const reads = await lookThroughVerifiedDirectories(guard, query.root, files, async (through, shown) => {
    const { handle } = await openForRead(guard, through, shown, { allowHardlinks: query.allowHardlinks });
    try {
      const wanted = new Set<number>();
      for (const hit of byFile.get(shown)!) for (let l = Math.max(1, hit.line - query.context); l <= hit.line + query.context; l++) wanted.add(l);
      return await readLines(handle, wanted);
    } finally {
      await handle.close();
    }
  });
  const matches: GrepMatch[] = [];
  files.forEach((path, i) => {
    const lines = reads[i];
    if (!lines) return;
    const seen = new Map<number, { text: string; match: boolean }>();
    for (const hit of byFile.get(path)!) {
      if (lines.get(hit.line)?.digest !== hit.digest) continue;
      for (let l = hit.line - query.context; l <= hit.line + query.context; l++) {
        const line = lines.get(l);
        if (line && !seen.get(l)?.match) seen.set(l, { text: line.text, match: l === hit.line });
      }
    }
    matches.push(...withContext(path, seen, query.context));
  });
  return matches;
}

/** The lines numbered in `wanted` (from 1, split at "\n" as ripgrep splits them), read no further than the last of them. */
async function readLines(handle: FileHandle, wanted: ReadonlySet<number>): Promise<Map<number, ReadLine>> {
  const last = Math.max(0, ...wanted);
  const lines = new Map<number, ReadLine>();
  const chunk = Buffer.alloc(64 * 1024);
  let number = 1;
  let current: Buffer[] = [];
  const endLine = () => {
    if (wanted.has(number)) {
      const bytes = Buffer.concat(current);
      lines.set(number, { digest: lineDigest(bytes), text: clipLine(bytes.toString('utf8')) });
    }
    current = [];
    number++;
  };
  while (number <= last) {
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) {
      if (current.length) endLine(); // the last line, without a terminator
      break;
    }
    const data = chunk.subarray(0, bytesRead);
    for (let start = 0; start < data.length && number <= last; ) {
      const newline = data.indexOf(0x0a, start);
      const end = newline === -1 ? data.length : newline + 1;
      if (wanted.has(number)) current.push(Buffer.from(data.subarray(start, end)));
      start = end;
      if (newline !== -1) endLine();
    }
  }
  return lines;
}
