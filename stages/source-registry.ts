/**
 * A registry of a project's tools run straight from sources (no build):
 * what `forge tool run` and `forge run` use. Specs and code come from the
 * same stages the build runs, and outbound requests pass the same egress
 * policy the built agent applies. MCP servers are connected on first use.
 */
import { isAbsolute, join } from 'node:path';
import { createEgressPolicy } from '../runtime/guard/egress.ts';
import { HttpClient } from '../runtime/net/http-client.ts';
import { createAdapterRuntime, type AdapterRuntime } from '../runtime/tools/adapters/adapter-runtime.ts';
import * as mcp from '../runtime/tools/adapters/mcp/index.ts';
import * as openapi from '../runtime/tools/adapters/openapi/index.ts';
import type { BuiltinDefinition } from '../runtime/tools/builtin/define.ts';
import { createRegistry, type RegistryBuild } from '../runtime/tools/create-tools.ts';
import type { Logger } from '../runtime/tools/model.ts';
import { silentLogger } from '../runtime/tools/registry.ts';
import { forgeVersion } from './forge-paths.ts';
import type { Project } from './load-project.ts';
import { createSourceNodeLauncher } from './source-node-launcher.ts';

export interface SourceRegistry extends RegistryBuild {
  http: HttpClient;
  adapters: AdapterRuntime;
}

export function createSourceRegistry(project: Project, options: { log?: Logger; env?: NodeJS.ProcessEnv } = {}): SourceRegistry {
  const { config } = project;
  const builtins: Record<string, BuiltinDefinition<any>> = {};
  for (const tool of project.tools) if (tool.builtin) builtins[tool.spec.name] = tool.builtin.definition;
  const origins = new Map(project.tools.map((t) => [t.spec.name, t.origin]));
  const http = new HttpClient(createEgressPolicy(project.adapters.egress));
  const env = options.env ?? process.env;
  const log = options.log ?? silentLogger;
  const adapters = createAdapterRuntime(
    { mcp: { servers: project.adapters.mcpServers }, apis: project.adapters.apis },
    { mcp, openapi },
    { http, env, log, workDir: config.workDir, clientVersion: forgeVersion() },
  );
  const built = createRegistry(
    project.tools.map((t) => t.spec),
    {
      builtins,
      log: options.log,
      http,
      env,
      adapters,
      custom: {
        workDir: config.workDir,
        envPassthrough: config.envPassthrough,
        resolveSource: (path) => (isAbsolute(path) ? path : join(config.root, path)),
        node: createSourceNodeLauncher(config.root),
      },
    },
    (spec) => origins.get(spec.name) ?? spec.name,
  );
  return { ...built, http, adapters };
}
