/**
 * An Agent as the runtime makes one, for the agent-loop and provider tests:
 * a real registry of a few read tools, a real model client on `model` (a
 * scripted server on loopback), conversations in a file store of its own.
 */
import { Agent, type AgentOptions } from '../../runtime/agent/agent.ts';
import { createModelClient } from '../../runtime/agent/providers/create-model.ts';
import type { ModelSettings } from '../../runtime/manifest.ts';
import { HttpClient } from '../../runtime/net/http-client.ts';
import { FileConversations } from '../../runtime/state/file-conversations.ts';
import { ok, type Tool } from '../../runtime/tools/model.ts';
import { ToolRegistry } from '../../runtime/tools/registry.ts';
import { tempDir } from './project.ts';

export interface TestTool {
  name: string;
  description?: string;
  /** What it returns (default: `${name} done`). */
  execute?: Tool['execute'];
}

export function agentWithTools(model: ModelSettings, tools: TestTool[], options: Partial<Pick<AgentOptions, 'gate' | 'maxKeptMessages' | 'maxKeptChars' | 'sessions'>> = {}): Agent {
  const registry = new ToolRegistry({ workDir: process.cwd() });
  for (const tool of tools) {
    registry.register({ name: tool.name, description: tool.description ?? `${tool.name}.`, category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: tool.execute ?? (async () => ok(`${tool.name} done`)) }, 'test');
  }
  return new Agent({
    manifest: { agent_id: 'a', version: '1.0.0', description: '' },
    tools: { list: () => registry.list(), execute: (n, a, o) => registry.execute(n, a, o) },
    model: createModelClient(model, new HttpClient(), {}),
    sessions: options.sessions ?? new FileConversations(tempDir()),
    ...options,
  });
}

/** Registers tools that record each call (`name {args}`, in the list returned) and answer `value`. */
export function recordingTools(registry: ToolRegistry, tools: { name: string; tags: string[]; value: unknown }[]): string[] {
  const calls: string[] = [];
  for (const { name, tags, value } of tools) {
    registry.register({ name, description: `${name} tool`, category: 'custom', tags, inputSchema: { type: 'object' }, execute: async (args) => (calls.push(`${name} ${JSON.stringify(args)}`), ok(value)) }, 'test');
  }
  return calls;
}

/** The read tool and the write tool the A2A tests talk to. */
export const LOOKUP_AND_DELETE = [
  { name: 'lookup', tags: ['read'], value: { population: 709000 } },
  { name: 'delete_file', tags: ['write'], value: 'deleted' },
];
