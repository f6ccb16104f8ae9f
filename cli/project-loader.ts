/** Loads the project for a CLI command and prints what the stages reported. */
import type { ProjectConfig } from '../stages/config/project-config.ts';
import { loadProject, loadProjectConfig, type Project } from '../stages/load-project.ts';
import { BuildStopped, StageContext } from '../stages/stage.ts';
import { printDiagnostics } from './diagnostics-output.ts';
import type { Diagnostic } from '../runtime/diagnostics.ts';
import { locateConfig } from '../stages/config/find-config.ts';

export interface LoadedProject {
  project?: Project;
  diagnostics: Diagnostic[];
}

/**
 * `strict` stops at the first stage with errors (validate); otherwise tools
 * with errors are left out and the rest stay usable (tool list/describe/run).
 */
export async function loadProjectForCli(configFile: string | undefined, options: { strict: boolean; json: boolean; extraRoots?: string[]; scopesOnly?: boolean }): Promise<LoadedProject> {
  const { loaded, diagnostics } = await loadForCli((ctx) => loadProject({ configFile, extraRoots: options.extraRoots, scopesOnly: options.scopesOnly }, ctx), options);
  return { project: loaded, diagnostics };
}

/** forge.yaml alone, resolved as the build resolves it (loadProjectConfig: no tool discovered, no MCP server started). */
export async function loadConfigForCli(configFile: string | undefined, options: { json: boolean; scopesOnly?: boolean }): Promise<{ config?: ProjectConfig; diagnostics: Diagnostic[] }> {
  const { loaded, diagnostics } = await loadForCli((ctx) => loadProjectConfig({ configFile, scopesOnly: options.scopesOnly }, ctx), { strict: false, json: options.json });
  return { config: loaded, diagnostics };
}

/** Runs a load, printing what its stages reported (unless --json); undefined when a stage stopped it. */
async function loadForCli<T>(load: (ctx: StageContext) => Promise<T>, options: { strict: boolean; json: boolean }): Promise<{ loaded?: T; diagnostics: Diagnostic[] }> {
  const ctx = new StageContext(process.cwd(), options.strict);
  let loaded: T | undefined;
  try {
    loaded = await load(ctx);
  } catch (err) {
    if (!(err instanceof BuildStopped)) throw err;
  }
  if (!options.json) printDiagnostics(ctx.diagnostics);
  return { loaded, diagnostics: ctx.diagnostics };
}

/**
 * For a tool not found where there is no project (`forge tool run` works anywhere, with the user and
 * global scopes' tools): why the project's tools are not there either. Undefined inside a project.
 */
export function outsideProjectHint(configFile: string | undefined): string | undefined {
  if (locateConfig({ configFile }, process.cwd())) return undefined;
  return 'no forge.yaml in this directory or any parent, so only the user and global scopes\' tools are found: cd into your project, or run `forge init` to create one';
}
