/** What `forge mcp ...` works with: forge.yaml's servers, and a way to reach them as the agent would. */
import { error, hasErrors, type Diagnostic } from '../runtime/diagnostics.ts';
import type { McpContext } from '../runtime/tools/adapters/mcp/connect.ts';
import { silentLogger } from '../runtime/tools/registry.ts';
import { locateConfig } from '../stages/config/find-config.ts';
import { loadConfig } from '../stages/config/load-config.ts';
import type { ProjectConfig } from '../stages/config/project-config.ts';
import { mcpHttpClient } from '../stages/adapters/mcp-http-client.ts';
import { forgeVersion } from '../stages/forge-paths.ts';
import { writeFailureJson } from '../runtime/failure-json.ts';
import { printDiagnostics } from './diagnostics-output.ts';

export interface McpCommandContext {
  config: ProjectConfig;
  mcp: McpContext;
  /** forge.yaml's warnings, for the command to show (a --json document's `warnings`). */
  warnings: Diagnostic[];
}

/** Loads forge.yaml; prints its problems (or their JSON) and returns undefined when it has errors. */
export async function loadMcpContext(configFile: string | undefined, json: boolean): Promise<McpCommandContext | undefined> {
  const file = locateConfig({ configFile }, process.cwd());
  const { config, diagnostics } = file
    ? await loadConfig(file)
    : { config: undefined, diagnostics: [error('FORGE_CONFIG_NOT_FOUND', 'no forge.yaml in this directory or any parent', {}, 'run `forge init` to create a project')] };
  if (!config || hasErrors(diagnostics)) {
    if (json) writeFailureJson(true, diagnostics);
    else printDiagnostics(diagnostics);
    return undefined;
  }
  return { config, warnings: diagnostics, mcp: { http: mcpHttpClient(config), env: process.env, log: silentLogger, workDir: config.workDir, clientVersion: forgeVersion() } };
}

/** How a server is reached, in one line: the command line, or the URL. */
export function describeTarget(server: ProjectConfig['mcpServers'][number]): string {
  return server.transport === 'http' ? (server.url ?? '') : [server.command, ...(server.args ?? [])].join(' ');
}
