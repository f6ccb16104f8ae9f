/**
 * A built bundle serving an agent that forges tools (emergent, agent scope
 * allowed), started on a free port with a token: what the e2e attacks on
 * forge_tool aim at, as a token holder over REST (approved by default).
 */
import { join } from 'node:path';
import { startAgentProcess, type AgentProcess } from './agent-process.ts';
import { forge, tempDir, writeProject } from './project.ts';

export interface ForgingAgent {
  agent: AgentProcess;
  /** POST /tools/NAME with `body`; the status and the JSON answer (20 s at most: a server held by an attack fails the test, not the run). */
  call(tool: string, body: unknown): Promise<{ status: number; body: any }>;
}

export async function startForgingAgent(agentId: string, tools: readonly string[]): Promise<ForgingAgent> {
  const project = writeProject({ 'forge.yaml': `agent_id: ${agentId}\nversion: 1.0.0\ndescription: x\ntools: [${tools.join(', ')}]\nemergent: { allow_agent_scope: true }\n` });
  const built = await forge(['build'], project);
  if (built.code !== 0) throw new Error(`the attacked agent did not build:\n${built.stdout}${built.stderr}`);
  const token = `${agentId}-token`;
  const agent = await startAgentProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: token } });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return {
    agent,
    call: (tool, body) => fetch(`${agent.url}/tools/${tool}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) }).then(async (res) => ({ status: res.status, body: (await res.json()) as any })),
  };
}
