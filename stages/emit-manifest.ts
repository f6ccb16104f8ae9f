/**
 * Stage: emit agent.json, the manifest the runtime serves from. Its content
 * depends only on the inputs (no timestamps, tools sorted by name), so two
 * builds of the same project write the same bytes.
 */
import { TOOL_INTERFACE_VERSION, type AgentManifest } from '../runtime/manifest.ts';
import { CATEGORIES, type Category, type ToolSpec } from '../runtime/tools/model.ts';
import { runsPython } from '../runtime/tools/reach.ts';
import type { ProjectConfig } from './config/project-config.ts';
import type { DiscoveredAdapters } from './discover-adapters.ts';
import { forgeVersion } from './forge-paths.ts';
import type { OutputWriter } from './output-writer.ts';

/** How many tools of each category the manifest holds (build-manifest.json and the build summary). */
export function categoryCounts(manifest: AgentManifest): Record<Category, number> {
  return Object.fromEntries(CATEGORIES.map((c) => [c, manifest.categories[c].length])) as Record<Category, number>;
}

export function createManifest(config: ProjectConfig, specs: readonly ToolSpec[], prod: boolean, adapters?: Pick<DiscoveredAdapters, 'egress' | 'mcpServers' | 'apis'>): AgentManifest {
  const tools = [...specs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const categories = Object.fromEntries(CATEGORIES.map((c) => [c, tools.filter((t) => t.category === c).map((t) => t.name)])) as Record<Category, string[]>;
  const manifest: AgentManifest = {
    tool_interface_version: TOOL_INTERFACE_VERSION,
    agent_id: config.agentId,
    version: config.version,
    description: config.description,
    tools,
    categories,
    egress: adapters?.egress ?? config.egress,
    approval: config.approval,
    env_passthrough: [...config.envPassthrough].sort(),
    requirements: { node: '>=20' },
    server: { host: config.server.host, port: config.server.port },
    runtime: config.runtime,
    build: { mode: prod ? 'prod' : 'dev', forge_version: forgeVersion() },
  };
  if (config.model) manifest.model = config.model;
  if (config.emergent) manifest.emergent = config.emergent;
  if (config.strictOutputs) manifest.strict_outputs = true;
  if (config.metrics === 'public') manifest.metrics = 'public';
  manifest.workdir = config.workDirSetting;
  manifest.sandbox = config.sandbox;
  if (config.schedules.length) manifest.schedules = config.schedules.map(({ source: _source, ...schedule }) => schedule);
  if (config.state) manifest.state = config.state;
  if (adapters?.mcpServers.length) manifest.mcp = { servers: adapters.mcpServers };
  if (adapters?.apis.length) manifest.apis = adapters.apis;
  if (tools.some(runsPython)) manifest.requirements.python = '>=3.8';
  return manifest;
}

export function emitManifest(manifest: AgentManifest, writer: OutputWriter): void {
  writer.writeJson('agent.json', manifest);
}
