/**
 * A REST tool call whose client goes away before the answer is stopped:
 * the tool's ctx.signal aborts, with an AbortError as its reason.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent } from '../../../runtime/server/serve.ts';
import { ok, type Tool } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';

describe('a REST call whose client goes away', () => {
  it('aborts the running tool', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let aborted!: (reason: unknown) => void;
    const stopped = new Promise<unknown>((resolve) => (aborted = resolve));
    const waits: Tool = {
      name: 'waits',
      description: 'Runs until its call is stopped.',
      category: 'custom',
      tags: ['read'],
      inputSchema: { type: 'object', properties: {} },
      execute: (_args, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            aborted(ctx.signal.reason);
            resolve(ok('stopped'));
          });
          started();
        }),
    };
    const registry = new ToolRegistry({ workDir: tempDir() });
    registry.register(waits, 'waits');
    const manifest = { agent_id: 'gone', version: '1.0.0', description: '', tools: registry.list() } as unknown as AgentManifest;
    const agent = await serveAgent({ manifest, registry, workDir: registry.workDir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger });
    try {
      const { port } = new URL(agent.url);
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => {});
      socket.write('POST /tools/waits HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
      await running;
      socket.destroy();
      expect(await stopped).toMatchObject({ name: 'AbortError' });
    } finally {
      await agent.stop(100);
    }
  });
});
