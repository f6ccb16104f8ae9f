/**
 * How long a model may take: its response's headers within the timeout,
 * then no longer a gap than the idle limit. A streamed answer that keeps
 * coming is never cut off by a deadline on the whole; one that stalls is.
 */
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createOpenAIProvider } from '../../../../runtime/agent/providers/openai.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { startServer } from '../../../helpers/http-server.ts';

const ask = (onText?: (delta: string) => void) => ({ messages: [{ role: 'user' as const, content: 'hi' }], tools: [], onText });
const piece = (res: ServerResponse, text: string) => res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`);

describe('a streamed answer', () => {
  it('that takes longer than the timeout in all, while it keeps coming, is whole', async () => {
    const server = await startServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 12; i++) {
        piece(res, `${i} `);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
    });
    // 12 pieces 50 ms apart: 600 ms in all, past a 400 ms timeout, with no gap near it.
    const model = createOpenAIProvider({ model: 'slow', baseUrl: `${server.url}/v1`, http: new HttpClient(), timeoutMs: 400, idleMs: 400 });
    const shown: string[] = [];
    const answer = await model.complete(ask((delta) => shown.push(delta)));
    expect(answer.text).toBe('0 1 2 3 4 5 6 7 8 9 10 11 ');
    expect(shown).toHaveLength(12);
  });

  it('that stops coming fails after the idle limit, closing the connection', async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = await startServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      piece(res, 'The answer is');
      req.socket.on('close', closed);
      // …and nothing more, ever.
    });
    const model = createOpenAIProvider({ model: 'stalled', baseUrl: `${server.url}/v1`, http: new HttpClient(), idleMs: 300 });
    const shown: string[] = [];
    const error = await model.complete(ask((delta) => shown.push(delta))).catch((e: unknown) => e);
    expect(error).toMatchObject({ message: 'openai:stalled: stream broke off: no data for 0.3 s', streamed: true });
    expect(shown).toEqual(['The answer is']);
    await connectionClosed;
  });
});
