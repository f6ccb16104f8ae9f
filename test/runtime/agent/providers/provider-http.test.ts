/**
 * How long a model may take: its response's headers within the timeout,
 * then no longer a gap than the idle limit. A streamed answer that keeps
 * coming is never cut off by a deadline on the whole; one that stalls is.
 */
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { runAgentTurn } from '../../../../runtime/agent/agent-loop.ts';
import { createAnthropicProvider } from '../../../../runtime/agent/providers/anthropic.ts';
import { createOpenAIProvider } from '../../../../runtime/agent/providers/openai.ts';
import { withRetries } from '../../../../runtime/agent/providers/retries.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { startServer } from '../../../helpers/http-server.ts';

const ask = (onText?: (delta: string) => void) => ({ messages: [{ role: 'user' as const, content: 'hi' }], tools: [], onText });
const piece = (res: ServerResponse, text: string) => res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`);

/** 12 pieces 50 ms apart, then the end: 600 ms in all, with no gap near a 400 ms limit. */
async function streamSlowly(res: ServerResponse): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (let i = 0; i < 12; i++) {
    piece(res, `${i} `);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
}

describe('a streamed answer', () => {
  it('that takes longer than the timeout in all, while it keeps coming, is whole', async () => {
    const server = await startServer(async (_req, res) => {
      await streamSlowly(res);
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

describe('an answer to a turn that shows nothing as it comes (a schedule\'s)', () => {
  it('is asked for as a stream too, so a long one is not cut off by the deadline on the response', async () => {
    const server = await startServer(async (req, res) => {
      const body = JSON.parse(req.body);
      // Generating takes 600 ms: past the 400 ms the response may take to begin, when sent whole as JSON.
      if (!body.stream) {
        await new Promise((resolve) => setTimeout(resolve, 600));
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' }] }));
      }
      await streamSlowly(res);
    });
    const model = createOpenAIProvider({ model: 'slow', baseUrl: `${server.url}/v1`, http: new HttpClient(), timeoutMs: 400, idleMs: 400 });
    const outcome = await runAgentTurn([{ role: 'user', content: 'write the report' }], { model, tools: { list: () => [], execute: async () => ({ ok: true, value: null }) }, gate: { decide: () => 'allow' } });
    expect(outcome).toEqual({ status: 'completed', text: '0 1 2 3 4 5 6 7 8 9 10 11 ' });
  });

  it.each(['openai', 'anthropic'] as const)('is asked again when its %s stream breaks after some text, since none of it was shown', async (provider) => {
    let requests = 0;
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const first = ++requests === 1;
      if (provider === 'openai') {
        piece(res, first ? 'half of' : 'whole');
        return first ? res.end() : res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
      }
      const send = (data: Record<string, unknown>) => res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
      send({ type: 'message_start', message: { id: 'm', role: 'assistant', content: [] } });
      send({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      send({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: first ? 'half of' : 'whole' } });
      if (!first) {
        send({ type: 'content_block_stop', index: 0 });
        send({ type: 'message_delta', delta: { stop_reason: 'end_turn' } });
        send({ type: 'message_stop' });
      }
      res.end();
    });
    const raw = provider === 'openai' ? createOpenAIProvider({ model: 'm', baseUrl: `${server.url}/v1`, http: new HttpClient() }) : createAnthropicProvider({ model: 'm', baseUrl: server.url, http: new HttpClient() });
    const answer = await withRetries(raw).complete({ messages: [{ role: 'user', content: 'hi' }], tools: [], stream: true });
    expect([answer.text, requests]).toEqual(['whole', 2]);
  });
});
