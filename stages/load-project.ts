/**
 * The front half of the pipeline, shared by `forge build`, `forge validate`
 * and `forge tool ...`: load config → discover tools → parse docstrings
 * (discover adapters alongside) → parse YAML tools → annotate categories →
 * resolve dependencies (across the scopes) → check compositions → check
 * schemas. What the build sees and what `forge tool run` runs come from this
 * one code path.
 */
import { join, resolve } from 'node:path';
import { error } from '../runtime/diagnostics.ts';
import { annotateCategories } from './annotate-categories.ts';
import { checkCompositions } from './check-compositions.ts';
import { checkSchemas } from './check-schemas.ts';
import { locateConfig } from './config/find-config.ts';
import { loadConfig, loadConfigText } from './config/load-config.ts';
import type { ProjectConfig } from './config/project-config.ts';
import { discoverAdapters, type DiscoveredAdapters, type DiscoveryMode } from './discover-adapters.ts';
import { discoverTools, type SourceFile } from './discover-tools.ts';
import { parseDocstrings, type CachedParse } from './parse-docstrings.ts';
import { parseYamlTools } from './parse-yaml-tools.ts';
import { compiledCliBuild, openProjectCache } from './project-cache.ts';
import { resolveToolDependencies } from './resolve-tool-dependencies.ts';
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
  /** Tools to bring in from the user or global scope even if no project tool needs them (`forge tool run user/x`). */
  extraRoots?: string[];
  /** Without a forge.yaml, load no project tools rather than fail (`forge tool run user/x` anywhere). */
  scopesOnly?: boolean;
}

export interface Project {
  config: ProjectConfig;
  tools: ProjectTool[];
  supportFiles: SourceFile[];
  /** Every file discovered in tool_dirs, and the scope files brought in (for the build cache). */
  files: SourceFile[];
  /** MCP servers and APIs: their tools, settings, and the egress they need. */
  adapters: DiscoveredAdapters;
  /** The user/global scope directories that were searched (for the build cache). */
  scopeDirs: string[];
}

/**
 * `checkSchemas: false` leaves the schema check to the caller: the build
 * runs it while esbuild bundles (see pipeline.ts).
 */
export interface LoadHooks {
  checkSchemas?: boolean;
  /** Called with the files in tool_dirs as soon as they are found (the build starts its Python check there). */
  onDiscovered?: (config: ProjectConfig, files: readonly SourceFile[]) => void;
}

/**
 * forge.yaml resolved: loadProject's first stage, alone (`forge doctor`: no
 * tool is discovered, no MCP server started, no spec read). Throws
 * BuildStopped when there is no config to use; its problems are on ctx.
 */
export async function loadProjectConfig(options: Pick<ProjectOptions, 'configFile' | 'scopesOnly'>, ctx: StageContext): Promise<ProjectConfig> {
  const config = await runStage(ctx, 'load-config', async () => {
    const file = locateConfig(options, ctx.cwd);
    if (!file && options.scopesOnly) {
      // No project: only the user and global scopes' tools, working in the current directory.
      const loaded = await loadConfigText(resolve(ctx.cwd, 'forge.yaml'), 'agent_id: scopes-only\nversion: 0.0.0\ntool_dirs: []\n', ctx.cwd);
      return loaded.config;
    }
    if (!file) {
      ctx.report(error('FORGE_CONFIG_NOT_FOUND', 'no forge.yaml in this directory or any parent', {}, 'run `forge init` to create a project'));
      return undefined;
    }
    const loaded = await loadConfig(file, ctx.cwd);
    ctx.report(...loaded.diagnostics);
    return loaded.config;
  });
  if (!config) throw new BuildStopped('load-config');
  return config;
}

export async function loadProject(options: ProjectOptions, ctx: StageContext, { checkSchemas: check = true, onDiscovered }: LoadHooks = {}): Promise<Project> {
  const project = await loadProjectConfig(options, ctx);
  // Reaching MCP servers takes a while: it overlaps finding and parsing the custom tools.
  const adaptersStarted = performance.now();
  const discovering = discoverAdapters(project, {
    mode: options.adapters ?? 'recorded-or-live',
    recordedFile: resolve(project.root, options.recordedManifest ?? join('.forge-output', 'agent.json')),
  }, ctx);
  discovering.catch(() => {});
  const files = await runStage(ctx, 'discover-tools', () => discoverTools(project, ctx));
  onDiscovered?.(project, files);
  const docstrings = await runStage(ctx, 'parse-docstrings', () => parseDocstrings(files, ctx, openProjectCache<CachedParse>('docstrings', project.root, compiledCliBuild())));
  const parsed = await runStage(ctx, 'parse-yaml-tools', () => parseYamlTools(files, docstrings, ctx));
  const adapters = await runStage(ctx, 'discover-adapters', () => discovering, adaptersStarted);
  const annotated = await runStage(ctx, 'annotate-categories', () => annotateCategories(project, parsed, ctx, adapters.tools));
  const resolved = await runStage(ctx, 'resolve-dependencies', () => resolveToolDependencies(annotated, ctx, { extraRoots: options.extraRoots, files }));
  const tools = resolved.tools;
  await runStage(ctx, 'check-compositions', () => checkCompositions(tools, ctx));
  if (check) await runStage(ctx, 'check-schemas', () => checkSchemas(tools, ctx));
  return { config: project, tools, supportFiles: parsed.supportFiles, files: [...files, ...resolved.scopeFiles], scopeDirs: resolved.scopeDirs, adapters };
}
