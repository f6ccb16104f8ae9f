/**
 * The studio's chat reads its body under the server's body deadlines
 * (FORGE_HTTP_LIMITS), as REST, MCP and A2A do: a client that starts a
 * message and stalls gets a 408 and loses the connection after the idle
 * deadline, not after node's whole-request backstop.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';
import { startStudioAgent } from '../../helpers/studio.ts';

const TOKEN = 'studio-slow-body-token';

describe('the studio chat body', () => {
  it('is cut off with a 408 once it stalls past the idle deadline', async () => {
    const llm = await startScriptedOpenAI([{ text: 'hi' }]);
    const { agent } = await startStudioAgent(llm.url, TOKEN, { FORGE_HTTP_LIMITS: 'headers=2s,body_idle=1s,body=30s' });
    try {
      await agent.waitFor(/studio\s+http/);
      const { port } = new URL(agent.url);
      const started = Date.now();
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1');
        let text = '';
        socket.on('data', (d) => (text += d));
        socket.on('error', reject);
        socket.on('close', () => resolve(text));
        socket.write(`POST /studio/api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"contextId":`);
        setTimeout(() => socket.destroy(), 15_000).unref();
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toContain('FORGE_BODY_TIMEOUT');
      expect(Date.now() - started).toBeLessThan(8000);
    } finally {
      await agent.stop();
    }
  }, 60_000);
});
