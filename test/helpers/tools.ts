/**
 * Tools shipped with Forge, running in a real registry over a temp work
 * dir, as the runtime builds them (spec + config → createRegistry).
 */
import { expect } from 'vitest';
import { HttpClient } from '../../runtime/net/http-client.ts';
import { createModelClient } from '../../runtime/agent/providers/create-model.ts';
import { onFileEnd } from './file-cleanup.ts';
import { findCatalogEntry } from '../../runtime/tools/catalog.ts';
import type { BuiltinDefinition } from '../../runtime/tools/builtin/define.ts';
import { createRegistry, type ToolFactories } from '../../runtime/tools/create-tools.ts';
import { toSpec, type Logger, type ToolResult } from '../../runtime/tools/model.ts';
import type { ToolRegistry } from '../../runtime/tools/registry.ts';

export interface ToolHarness {
  registry: ToolRegistry;
  call(name: string, args?: unknown, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<ToolResult>;
  /** The value of a call that must succeed (the failure is shown if it did not). */
  value<T = Record<string, unknown>>(name: string, args?: unknown): Promise<T>;
  warnings: string[];
}

export interface HarnessOptions {
  workDir: string;
  /** Per tool: its forge.yaml `config:`. */
  config?: Record<string, Record<string, unknown>>;
  env?: NodeJS.ProcessEnv;
  schedules?: ToolFactories['schedules'];
  agentConfig?: unknown;
  http?: ToolFactories['http'];
}

const open: ToolRegistry[] = [];
onFileEnd(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

export async function tools(names: string[], options: HarnessOptions): Promise<ToolHarness> {
  const builtins: Record<string, BuiltinDefinition<any>> = {};
  const specs = [];
  for (const name of names) {
    const entry = findCatalogEntry(name);
    if (!entry) throw new Error(`no catalog tool ${name}`);
    const definition = (await entry.load()).default;
    builtins[name] = definition;
    specs.push(toSpec({ ...definition.spec, config: options.config?.[name] ?? {} }));
  }
  const warnings: string[] = [];
  const log: Logger = { debug() {}, info() {}, warn: (m) => warnings.push(m) };
  const { registry, diagnostics } = createRegistry(
    specs,
    {
      builtins,
      log,
      env: options.env ?? process.env,
      schedules: options.schedules,
      agentConfig: options.agentConfig,
      http: options.http,
      // As the runtime's assembly does it (runtime/assemble.ts): forge_tool's model judge.
      modelClient: async (model) => createModelClient(model, options.http ?? new HttpClient(), options.env ?? process.env),
      custom: { workDir: options.workDir, resolveSource: (p) => p, node: { worker: async () => ({ command: 'false', args: [] }), script: async () => ({ command: 'false', args: [] }) } },
    },
    (spec) => spec.name,
  );
  if (diagnostics.length) throw new Error(diagnostics.map((d) => d.message).join('\n'));
  open.push(registry);
  const call = (name: string, args: unknown = {}, callOptions = {}) => registry.execute(name, args, callOptions);
  return {
    registry,
    call,
    warnings,
    async value<T>(name: string, args: unknown = {}): Promise<T> {
      const result = await call(name, args);
      if (!result.ok) throw new Error(`${name} failed: ${result.error.code} ${result.error.message}${result.error.hint ? ` (${result.error.hint})` : ''}`);
      return result.value as T;
    },
  };
}

/** The call was refused with `code`, and its hint says what to do instead. */
export function expectRefusal(result: ToolResult, code: string, hint: RegExp, label: string): void {
  expect(result.ok, `${label}: ${JSON.stringify(result)}`).toBe(false);
  if (!result.ok) {
    expect(result.error.code, label).toBe(code);
    expect(result.error.hint, label).toMatch(hint);
  }
}
