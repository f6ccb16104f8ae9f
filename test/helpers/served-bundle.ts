/**
 * A project's bundle built and served with a token, and the two front ends the freeze tests send their
 * payloads through (REST and MCP over HTTP), each bounded in time: what they guard against held the agent
 * for seconds or killed it, so an answer that does not come in time is the failure.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { startAgentProcess, type AgentProcess } from './agent-process.ts';
import { forge, tempDir } from './project.ts';

/** Generous for a loaded machine. */
export const IN_TIME = 15_000;

export interface ServedBundle {
  agent: AgentProcess;
  /** POST /tools/NAME: the HTTP status and the JSON body. */
  rest(tool: string, body: unknown): Promise<{ status: number; body: any }>;
  /** tools/call over MCP: the JSON-RPC result. */
  mcp(tool: string, args: unknown): Promise<any>;
}

export async function serveBuiltBundle(project: string, token: string, buildArgs: string[] = ['build']): Promise<ServedBundle> {
  const built = await forge(buildArgs, project);
  expect(built.code, built.stdout + built.stderr).toBe(0);
  const agent = await startAgentProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: token } });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return {
    agent,
    rest: (tool, body) =>
      fetch(`${agent.url}/tools/${tool}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(IN_TIME) }).then(async (res) => ({ status: res.status, body: (await res.json()) as any })),
    mcp: (tool, args) =>
      fetch(`${agent.url}/mcp`, {
        method: 'POST',
        headers: { ...headers, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } }),
        signal: AbortSignal.timeout(IN_TIME),
      }).then(async (res) => ((await res.json()) as any).result),
  };
}
