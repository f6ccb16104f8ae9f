/**
 * The running tools of a built bundle, made from its agent.json: the
 * approval policy (forge.yaml's rules plus the command line's), one HTTP
 * client with the egress policy, the adapters (MCP servers connected at
 * start), and every tool wired to the code compiled into the bundle.
 * main.ts loads this only for the commands that run tools, so a tool
 * worker (`__worker`) starts without any of it.
 */
import { isAbsolute, join } from 'node:path';
import { DiagnosticError, type Diagnostic } from './diagnostics.ts';
import { ApprovalPolicy } from './guard/approval-policy.ts';
import { createEgressPolicy } from './guard/egress.ts';
import type { BundleContents } from './main.ts';
import type { AgentManifest } from './manifest.ts';
import { HttpClient } from './net/http-client.ts';
import { createAdapterRuntime, startAdapterTools } from './tools/adapters/adapter-runtime.ts';
import { createRegistry } from './tools/create-tools.ts';
import type { Logger } from './tools/model.ts';
import type { ToolRegistry } from './tools/registry.ts';

export interface BundleRegistryOptions {
  bundleFile: string;
  workDir: string;
  log: Logger;
  rules: { autoApprove?: string[]; autoDeny?: string[] };
  /** Connect the MCP servers (every command but `describe`). */
  connect: boolean;
}

export type BundleRegistry =
  | { ok: true; registry: ToolRegistry; http: HttpClient; diagnostics: Diagnostic[]; close(): Promise<void> }
  /** `usage`: a rule on the command line does not parse (exit 2); otherwise a required MCP server is down (exit 1). */
  | { ok: false; usage: boolean; diagnostics: Diagnostic[] };

export async function createBundleRegistry(contents: BundleContents, manifest: AgentManifest, options: BundleRegistryOptions): Promise<BundleRegistry> {
  const { bundleFile, workDir, log } = options;
  const bundleDir = join(bundleFile, '..');
  let approval: ApprovalPolicy;
  try {
    approval = ApprovalPolicy.create(manifest.approval, options.rules);
  } catch (err) {
    if (!(err instanceof DiagnosticError)) throw err;
    return { ok: false, usage: true, diagnostics: err.diagnostics };
  }
  // Every outbound request of every tool goes through this one client and its egress policy.
  const http = new HttpClient(createEgressPolicy(manifest.egress));
  const adapters = createAdapterRuntime(manifest, contents.adapters ?? {}, { http, env: process.env, log, workDir, clientVersion: manifest.build?.forge_version });
  const diagnostics: Diagnostic[] = [];
  let specs = manifest.tools;
  if (options.connect) {
    const started = await startAdapterTools(adapters, manifest.tools);
    diagnostics.push(...started.diagnostics);
    if (started.diagnostics.some((d) => d.severity === 'error')) {
      await adapters.close();
      return { ok: false, usage: false, diagnostics };
    }
    specs = started.specs;
  }
  const { registry, diagnostics: problems } = createRegistry(
    specs,
    {
      builtins: contents.builtins,
      http,
      log,
      adapters,
      approval,
      strictOutputs: manifest.strict_outputs,
      yaml: contents.yamlTools?.({ workDir, envPassthrough: manifest.env_passthrough }),
      schedules: (manifest.schedules ?? []).map((s) => ({ ...s, source: 'config' as const })),
      agentConfig: { ...manifest, tools: undefined, workdir: workDir },
      custom: {
        workDir,
        envPassthrough: manifest.env_passthrough,
        resolveSource: (path) => (isAbsolute(path) ? path : join(bundleDir, path)),
        node: {
          worker: async (spec) => ({ command: process.execPath, args: [bundleFile, '__worker', spec.name] }),
          script: async (spec) => ({ command: process.execPath, args: [join(bundleDir, spec.source!.path)] }),
        },
      },
    },
    (spec) => `agent.json#${spec.name}`,
  );
  const close = async () => {
    await registry.close();
    await adapters.close();
  };
  return { ok: true, registry, http, diagnostics: [...diagnostics, ...problems], close };
}
