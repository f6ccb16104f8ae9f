/**
 * The front half of the pipeline, shared by `forge build`, `forge validate`
 * and `forge tool ...`: load config → discover tools → parse docstrings
 * (discover adapters alongside) → annotate categories → check schemas.
 * What the build sees and what `forge tool run` runs come from this one
 * code path.
 */
import { join, resolve } from 'node:path';
import { error } from '../runtime/diagnostics.ts';
import { annotateCategories } from './annotate-categories.ts';
import { checkSchemas } from './check-schemas.ts';
import { locateConfig } from './config/find-config.ts';
import { loadConfig } from './config/load-config.ts';
import type { ProjectConfig } from './config/project-config.ts';
import { discoverAdapters, type DiscoveredAdapters, type DiscoveryMode } from './discover-adapters.ts';
import { discoverTools, type SourceFile } from './discover-tools.ts';
import { parseDocstrings } from './parse-docstrings.ts';
import type { ProjectTool } from './project-tool.ts';
import { BuildStopped, runStage, type StageContext } from './stage.ts';

export interface ProjectOptions {
  /** forge.yaml to use; by default the nearest one at or above the current directory. */
  configFile?: string;
  /**
   * How MCP servers and specs on the web are read: `live` (the build),
   * `offline` (the build with --offline: what the last build recorded), or
   * `recorded-or-live` (the default: the recorded list when there is one).
   */
  adapters?: DiscoveryMode;
  /** The last build's agent.json, relative to the project root (default: .forge-output/agent.json). */
  recordedManifest?: string;
}

export interface Project {
  config: ProjectConfig;
  tools: ProjectTool[];
  supportFiles: SourceFile[];
  /** Every file discovered in tool_dirs (for the build cache). */
  files: SourceFile[];
  /** MCP servers and APIs: their tools, settings, and the egress they need. */
  adapters: DiscoveredAdapters;
}

/**
 * `checkSchemas: false` leaves the schema check to the caller: the build
 * runs it while esbuild bundles (see pipeline.ts).
 */
export async function loadProject(options: ProjectOptions, ctx: StageContext, { checkSchemas: check = true } = {}): Promise<Project> {
  const config = await runStage(ctx, 'load-config', async () => {
    const file = locateConfig(options, ctx.cwd);
    if (!file) {
      ctx.report(error('FORGE_CONFIG_NOT_FOUND', 'no forge.yaml in this directory or any parent', {}, 'run `forge init` to create a project'));
      return undefined;
    }
    const loaded = await loadConfig(file, ctx.cwd);
    ctx.report(...loaded.diagnostics);
    return loaded.config;
  });
  if (!config) throw new BuildStopped('load-config');
  const project = config;
  // Reaching MCP servers takes a while: it overlaps finding and parsing the custom tools.
  const adaptersStarted = performance.now();
  const discovering = discoverAdapters(project, {
    mode: options.adapters ?? 'recorded-or-live',
    recordedFile: resolve(project.root, options.recordedManifest ?? join('.forge-output', 'agent.json')),
  }, ctx);
  discovering.catch(() => {});
  const files = await runStage(ctx, 'discover-tools', () => discoverTools(project, ctx));
  const parsed = await runStage(ctx, 'parse-docstrings', () => parseDocstrings(files, ctx));
  const adapters = await runStage(ctx, 'discover-adapters', () => discovering, adaptersStarted);
  const tools = await runStage(ctx, 'annotate-categories', () => annotateCategories(project, parsed, ctx, adapters.tools));
  if (check) await runStage(ctx, 'check-schemas', () => checkSchemas(tools, ctx));
  return { config: project, tools, supportFiles: parsed.supportFiles, files, adapters };
}
