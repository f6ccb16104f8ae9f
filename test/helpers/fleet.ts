/**
 * A fleet of one built bundle: replicas (`node runtime.mjs serve`, each in
 * its own empty work dir, like pods) sharing a state store, behind a
 * round-robin proxy; and the A2A / REST calls the tests make through it.
 */
import { join } from 'node:path';
import { startAgentProcess, type AgentProcess } from './agent-process.ts';
import { startPostgres, type TestPostgres } from './postgres.ts';
import { deployBundle, forge, minimalConfig, tempDir, writeProject } from './project.ts';
import { startScriptedOpenAI, type ScriptedServer, type Step } from './scripted-llm.ts';

export const FLEET_TOKEN = 'fleet-token-for-tests';
export const auth = { authorization: `Bearer ${FLEET_TOKEN}` };

export interface FleetSettings {
  bundle: string;
  stateUrl: string;
  publicUrl: string;
  env?: NodeJS.ProcessEnv;
  /** Its work dir (default: a fresh one, as a new pod gets); the same one again for a restart on the same disk. */
  workDir?: string;
  /** Told its output so far as it grows (before it listens too). */
  onOutput?: (output: string) => void;
}

/**
 * What a fleet starts from: a real PostgreSQL, a model that answers each of `turns` turns with `answer`, and the
 * bundle of a project on that model (forge.yaml's `tools:`, and tool files), built with --prod and deployed alone.
 */
export async function fleetParts(answer: Step, turns: number, project: { tools: string[]; files: Record<string, string> }): Promise<{ postgres: TestPostgres; llm: ScriptedServer; bundle: string }> {
  const [postgres, llm] = await Promise.all([startPostgres(), startScriptedOpenAI(Array.from({ length: turns }, () => answer))]);
  const tools = project.tools.map((name) => `  - ${name}\n`).join('');
  const dir = writeProject({ 'forge.yaml': minimalConfig(`model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\ntools:\n${tools}`), ...project.files });
  const built = await forge(['build', '--prod'], dir);
  if (built.code !== 0) throw new Error(`the fleet's bundle did not build:\n${built.stdout}${built.stderr}`);
  return { postgres, llm, bundle: deployBundle(dir).bundle };
}

export function startReplica(settings: FleetSettings): Promise<AgentProcess> {
  return startAgentProcess(process.execPath, [join(settings.bundle, 'runtime.mjs'), 'serve', '--port', '0'], {
    cwd: settings.workDir ?? tempDir('forge-replica-'),
    onOutput: settings.onOutput,
    env: {
      FORGE_AUTH_TOKEN: FLEET_TOKEN,
      FORGE_STATE_URL: settings.stateUrl,
      FORGE_PUBLIC_URL: settings.publicUrl,
      FORGE_LEASE: '3s',
      // Longer than a few readiness probes even on a loaded machine: the proxy sees the 503 before the replica stops accepting.
      FORGE_DRAIN_DELAY: '2s',
      FORGE_SHUTDOWN_GRACE: '10s',
      ...settings.env,
    },
  });
}

let messages = 0;

/** A2A v0.3 message/send; `blocking: false` returns the task as soon as it exists. */
export async function sendMessage(url: string, message: { text: string; contextId?: string; taskId?: string; data?: unknown }, blocking = true): Promise<any> {
  const parts: unknown[] = [{ kind: 'text', text: message.text }];
  if (message.data !== undefined) parts.push({ kind: 'data', data: message.data });
  const params: Record<string, unknown> = {
    message: { kind: 'message', role: 'user', messageId: `m-${process.pid}-${++messages}`, parts, ...(message.contextId ? { contextId: message.contextId } : {}), ...(message.taskId ? { taskId: message.taskId } : {}) },
  };
  if (!blocking) params.configuration = { blocking: false };
  const response = await fetch(`${url}/a2a`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: messages, method: 'message/send', params }) });
  const body = (await response.json()) as any;
  if (body.error) throw new Error(`A2A error from ${response.headers.get('x-backend') ?? url}: ${JSON.stringify(body.error)}`);
  return body.result;
}

export async function getTask(url: string, id: string): Promise<any> {
  const response = await fetch(`${url}/a2a`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id } }) });
  const body = (await response.json()) as any;
  if (body.error) throw new Error(`A2A error: ${JSON.stringify(body.error)}`);
  return body.result;
}

export async function callTool(url: string, name: string, args: unknown): Promise<{ status: number; body: any; backend: string | null; retryAfter: string | null }> {
  const response = await fetch(`${url}/tools/${name}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  return { status: response.status, body: await response.json(), backend: response.headers.get('x-backend'), retryAfter: response.headers.get('retry-after') };
}

/** Resolves when `check` returns a value (not undefined), polling; rejects after `ms`. */
export async function waitUntil<T>(check: () => Promise<T | undefined> | T | undefined, ms = 20_000, what = 'the condition'): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
