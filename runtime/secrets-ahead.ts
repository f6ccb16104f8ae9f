/**
 * The agent's secret files, hidden before its stdio MCP servers start. A
 * server lives on with the mounts it started with (server-sandbox.ts),
 * while the token and the model keys are read, and their files hidden,
 * once serving begins: NAME_FILE of each (FORGE_AUTH_TOKEN, the model
 * chain's keys) and the state dir, where a generated token is written.
 * A file or state dir that is wrong is left for its reader to report.
 */
import { modelKeyVariables } from './agent/providers/create-model.ts';
import { hideFromTools } from './exec/tool-sandbox.ts';
import type { AgentManifest } from './manifest.ts';
import { forgeStateDir } from './secrets.ts';

export function hideSecretsBeforeServers(manifest: Pick<AgentManifest, 'model' | 'mcp'>, env: NodeJS.ProcessEnv, workDir: string): void {
  if (!manifest.mcp?.servers.some((s) => s.transport === 'stdio')) return;
  for (const name of ['FORGE_AUTH_TOKEN', ...(manifest.model ? modelKeyVariables(manifest.model) : [])]) {
    const file = env[`${name}_FILE`]?.trim();
    if (file) hideFromTools(file);
  }
  try {
    forgeStateDir(workDir, env);
  } catch {
    // reported when the agent needs it
  }
}
