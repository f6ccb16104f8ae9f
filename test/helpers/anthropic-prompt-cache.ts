/**
 * Anthropic's prompt cache, as its documentation describes it, for the
 * scripted Anthropic server: a request is read as one run of blocks (the
 * tools, then the system prompt's blocks, then each message's content
 * blocks); a block marked with cache_control writes what comes before it and
 * the block itself to the cache, and a mark reads the longest cached
 * beginning that ends at it or at one of the 20 blocks before it. The usage
 * is reported as the API reports it: input_tokens leaves out what was read
 * from the cache and what was written to it. A token is four characters here.
 */
import { createHash } from 'node:crypto';

/** How far back from a mark the cache looks for a beginning it kept. */
const LOOKBACK = 20;

export interface CacheUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export class AnthropicPromptCache {
  private readonly kept = new Set<string>();

  /** What `body` costs with what earlier requests kept, keeping what its marks ask for. */
  take(body: Record<string, any>): CacheUsage {
    const blocks = blocksOf(body);
    // The beginning up to and with each block: its key, and its tokens.
    const keys: string[] = [];
    const tokens: number[] = [];
    const hash = createHash('sha256');
    let chars = 0;
    for (const block of blocks) {
      const text = JSON.stringify(withoutMark(block));
      hash.update(text);
      keys.push(hash.copy().digest('hex'));
      chars += text.length;
      tokens.push(Math.ceil(chars / 4));
    }
    const total = tokens.at(-1) ?? 0;
    const marks = blocks.flatMap((block, i) => (block.cache_control ? [i] : []));
    let read = -1;
    for (const mark of marks) {
      for (let i = mark; i >= Math.max(0, mark - LOOKBACK); i--) {
        if (this.kept.has(keys[i])) {
          read = Math.max(read, i);
          break;
        }
      }
    }
    const readTokens = read < 0 ? 0 : tokens[read];
    const lastMark = marks.at(-1);
    const written = lastMark !== undefined && lastMark > read ? tokens[lastMark] - readTokens : 0;
    for (const mark of marks) this.kept.add(keys[mark]);
    return { input_tokens: total - readTokens - written, cache_read_input_tokens: readTokens, cache_creation_input_tokens: written };
  }
}

function blocksOf(body: Record<string, any>): Record<string, any>[] {
  const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
  const messages = (body.messages ?? []).flatMap((m: { role: string; content: unknown }) =>
    (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as Record<string, any>[])).map((block) => ({ role: m.role, ...block })),
  );
  return [...(body.tools ?? []), ...system, ...messages];
}

function withoutMark(block: Record<string, any>): Record<string, any> {
  const { cache_control: _mark, ...rest } = block;
  return rest;
}
