import { stat } from 'node:fs/promises';
import { readVerified } from '../../guard/verified-open.ts';
import MiniSearch from 'minisearch';
import { isFailure } from '../fs-results.ts';
import { ok } from '../model.ts';
import { defineBuiltin } from './define.ts';
import { chunkMarkdown, type MemoryChunk } from './memory/memory-chunks.ts';
import { DEFAULT_MEMORY_DIR, MAX_MEMORY_FILE_BYTES, MEMORY_CONFIG_SCHEMA, memoryFiles, openMemoryFolder } from './memory/memory-folder.ts';

export default defineBuiltin({
  spec: {
    name: 'memory_search',
    description: [
      `Search the agent's long-term memory: the Markdown files under ${DEFAULT_MEMORY_DIR}/ in the working directory (config \`dir\`).`,
      'Files are cut into passages (paragraphs and sections, with the heading they sit under) and ranked by BM25 relevance to the query\'s words (prefix and small-typo matches count, for less). Returns the best passages with their text, source file, line range and score; read more around one with memory_get.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      required: ['query'],
      additionalProperties: false,
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 1000, description: 'Words to look for.' },
        max_results: { type: 'integer', minimum: 1, maximum: 50, default: 5, description: 'Most passages to return.' },
      },
    },
  },
  configSchema: MEMORY_CONFIG_SCHEMA,
  create(host) {
    return {
      async execute(args) {
        const { query, max_results: maxResults } = args;
        const folder = await openMemoryFolder(host.workDir, host.config.dir);
        if (isFailure(folder)) return folder;
        const chunks: MemoryChunk[] = [];
        for (const file of await memoryFiles(folder)) {
          const absolute = folder.guard!.resolve(file).absolute;
          const info = await stat(absolute).catch(() => undefined);
          if (!info || info.size > MAX_MEMORY_FILE_BYTES) continue;
          const read = await readVerified(folder.guard!, absolute, file).catch(() => undefined);
          if (read) chunks.push(...chunkMarkdown(file, read.bytes.toString('utf8')));
        }
        const index = new MiniSearch<MemoryChunk>({ fields: ['text', 'heading'], storeFields: ['source', 'startLine', 'endLine', 'text'] });
        index.addAll(chunks);
        const hits = index.search(query, { prefix: (term) => term.length >= 3, fuzzy: (term) => (term.length >= 5 ? 0.2 : false), boost: { heading: 1.5 }, combineWith: 'OR' });
        return ok({
          folder: folder.display,
          files: new Set(chunks.map((c) => c.source)).size,
          results: hits.slice(0, maxResults).map((hit) => ({
            text: hit.text as string,
            source: hit.source as string,
            start_line: hit.startLine as number,
            end_line: hit.endLine as number,
            score: Math.round(hit.score * 1000) / 1000,
          })),
        });
      },
    };
  },
});
