/**
 * A memory file cut into passages for search: blocks of lines separated by
 * blank lines (a heading starts a new block), at most MAX_CHUNK_LINES each.
 * Each passage keeps its line range and the heading it sits under, which is
 * indexed with it so a passage is found by its section's title too.
 */
export interface MemoryChunk {
  id: string;
  source: string;
  startLine: number;
  endLine: number;
  heading: string;
  text: string;
}

const MAX_CHUNK_LINES = 30;

export function chunkMarkdown(source: string, content: string): MemoryChunk[] {
  const lines = content.split(/\r?\n/);
  const chunks: MemoryChunk[] = [];
  let heading = '';
  let start = -1;
  const close = (end: number) => {
    if (start < 0) return;
    const text = lines.slice(start, end).join('\n').trim();
    if (text) chunks.push({ id: `${source}:${start + 1}`, source, startLine: start + 1, endLine: end, heading, text });
    start = -1;
  };
  let inFence = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const isHeading = !inFence && /^#{1,6}\s/.test(line);
    if (isHeading) {
      close(i);
      heading = line.replace(/^#+\s*/, '').trim();
    }
    if (!inFence && line.trim() === '') {
      close(i);
      continue;
    }
    if (start < 0) start = i;
    if (i - start + 1 >= MAX_CHUNK_LINES) close(i + 1);
  }
  close(lines.length);
  return chunks;
}
