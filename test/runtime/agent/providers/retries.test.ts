/**
 * A model asked again before the next fallback: on the answers and failures
 * the provider SDKs retry (408, 409, 429, 5xx, a dropped connection, a
 * stream cut before its end, Anthropic's overloaded stream), after the wait
 * the provider asked for, never once text has streamed, never past a cancel.
 */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../../runtime/agent/messages.ts';
import { createModelClient } from '../../../../runtime/agent/providers/create-model.ts';
import { retryAfterMs } from '../../../../runtime/agent/providers/provider-http.ts';
import { MODEL_RETRIES, retryDelay } from '../../../../runtime/agent/providers/retries.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { startServer } from '../../../helpers/http-server.ts';
import { startScriptedAnthropic, startScriptedOpenAI, type ScriptedServer } from '../../../helpers/scripted-llm.ts';

const http = new HttpClient();
const ask = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };

function client(provider: 'openai' | 'anthropic', url: string) {
  const retries: string[] = [];
  const model = createModelClient({ provider, name: 'm', base_url: provider === 'openai' ? `${url}/v1` : url }, http, {}, { retry: (label, err, delay) => retries.push(`${label} in ${delay} ms: ${err.message}`) });
  return { model, retries };
}

describe.each([
  ['openai', startScriptedOpenAI],
  ['anthropic', startScriptedAnthropic],
] as const)('a %s model', (provider, start) => {
  it.each([408, 409, 429, 500, 503, 529])('answering %i is asked again, after the wait it asked for', async (status) => {
    const server: ScriptedServer = await start([{ status, text: 'slow down', headers: { 'retry-after-ms': '0' } }, { text: 'answered' }]);
    const { model, retries } = client(provider, server.url);
    expect(await model.complete({ ...ask, onText: () => {} })).toMatchObject({ text: 'answered' });
    expect(server.bodies).toHaveLength(2);
    expect(retries).toEqual([`${provider}:m in 0 ms: ${provider}:m: HTTP ${status}: slow down`]);
  });

  it.each([400, 401, 403, 404, 422])('answering %i is not asked again', async (status) => {
    const server = await start([{ status, text: 'bad request', headers: { 'retry-after-ms': '0' } }, { text: 'never asked' }]);
    const { model, retries } = client(provider, server.url);
    await expect(model.complete(ask)).rejects.toThrow(`HTTP ${status}: bad request`);
    expect([server.bodies.length, retries.length]).toEqual([1, 0]);
  });

  it(`gives up after ${MODEL_RETRIES} more tries, with the last failure`, async () => {
    const server = await start(Array.from({ length: 5 }, (_, i) => ({ status: 503, text: `busy ${i}`, headers: { 'retry-after': '0' } })));
    const { model } = client(provider, server.url);
    await expect(model.complete(ask)).rejects.toThrow(`HTTP 503: busy ${MODEL_RETRIES}`);
    expect(server.bodies).toHaveLength(1 + MODEL_RETRIES);
  });

  it('stops waiting when the turn is cancelled', async () => {
    const server = await start([{ status: 429, text: 'rate limited', headers: { 'retry-after': '50' } }, { text: 'never asked' }]);
    const { model, retries } = client(provider, server.url);
    const cancel = new AbortController();
    const answer = model.complete({ ...ask, signal: cancel.signal });
    while (retries.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    cancel.abort();
    // Without the cancel it would wait 50 s, past the test's time limit.
    await expect(answer).rejects.toThrow('rate limited');
    expect(server.bodies).toHaveLength(1);
  });
});

describe('failures past an answer', () => {
  it('a connection dropped before any answer is tried again', async () => {
    let requests = 0;
    const server = await startServer((req, res) => {
      if (++requests === 1) return req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'second time' }, finish_reason: 'stop' }] }));
    });
    const { model, retries } = client('openai', server.url);
    expect(await model.complete(ask)).toMatchObject({ text: 'second time' });
    expect(requests).toBe(2);
    expect(retries).toHaveLength(1);
  });

  /** An Anthropic stream of these events, then `end` (Anthropic's error event, or nothing: cut short). */
  const anthropicStream = (answers: { text?: string; overloaded?: boolean }[]) => {
    let request = 0;
    return startServer((_req, res) => {
      const answer = answers[request++];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (data: Record<string, unknown>) => res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
      send({ type: 'message_start', message: { id: 'm', role: 'assistant', content: [] } });
      send({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      if (answer.text) send({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: answer.text } });
      if (answer.overloaded) send({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
      else if (answer.text === 'whole') {
        send({ type: 'content_block_stop', index: 0 });
        send({ type: 'message_delta', delta: { stop_reason: 'end_turn' } });
        send({ type: 'message_stop' });
      }
      res.end();
    });
  };

  it('an overloaded stream, or one cut short, before any text is tried again', async () => {
    const server = await anthropicStream([{ overloaded: true }, {}, { text: 'whole' }]);
    const { model, retries } = client('anthropic', server.url);
    expect(await model.complete({ ...ask, onText: () => {} })).toMatchObject({ text: 'whole' });
    expect(retries.map((r) => r.replace(/ in \d+(\.\d+)? ms/, ''))).toEqual(['anthropic:m: anthropic:m: Overloaded', 'anthropic:m: anthropic:m: stream ended before the answer was complete (no message_stop)']);
  });

  it('once text has streamed to the caller, a failure is not tried again: the text would be shown twice', async () => {
    const server = await anthropicStream([{ text: 'half an answer', overloaded: true }, { text: 'whole' }]);
    const { model, retries } = client('anthropic', server.url);
    const shown: string[] = [];
    const error = await model.complete({ ...ask, onText: (delta) => shown.push(delta) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect([shown, retries]).toEqual([['half an answer'], []]);
  });
});

describe('the wait before asking again', () => {
  it('reads retry-after-ms, retry-after in seconds and as an HTTP date', () => {
    const now = Date.parse('2026-11-28T10:00:00Z');
    expect(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' }, now)).toBe(250);
    expect(retryAfterMs({ 'retry-after': '2' }, now)).toBe(2000);
    expect(retryAfterMs({ 'retry-after': 'Sat, 28 Nov 2026 10:00:03 GMT' }, now)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': 'Sat, 28 Nov 2026 09:00:00 GMT' }, now)).toBe(0);
    for (const headers of [{} as Record<string, string>, { 'retry-after': 'soon' }, { 'retry-after': '-1' }, { 'retry-after': '' }]) expect(retryAfterMs(headers, now)).toBeUndefined();
  });

  it('waits what was asked up to a minute, else backs off from 0.5 s, doubling, at most 8 s, never longer than that', () => {
    expect(retryDelay(0, 60_000)).toBe(60_000);
    for (let attempt = 0; attempt < 8; attempt++) {
      const limit = Math.min(500 * 2 ** attempt, 8_000);
      for (const asked of [undefined, 3_600_000]) {
        const delay = retryDelay(attempt, asked);
        expect(delay).toBeGreaterThan(limit * 0.74);
        expect(delay).toBeLessThanOrEqual(limit);
      }
    }
  });
});
