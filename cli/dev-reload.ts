/**
 * Hot reload for `forge run --dev`: watches forge.yaml and the tool
 * directories, and on a change loads the project again and swaps in the
 * tools that changed — without restarting the process. A call already
 * running finishes on the old version; the old version's worker is closed
 * once its calls are done. A change to a support file (a helper module)
 * reloads every custom tool, since any of them may import it.
 */
import { watch, type FSWatcher } from 'node:fs';
import { relative } from 'node:path';
import { runtimeFactories } from '../runtime/assemble.ts';
import { isForged } from '../runtime/tools/emergent/forged-mark.ts';
import { createTool } from '../runtime/tools/create-tools.ts';
import { toSpec, type Logger, type ToolSpec } from '../runtime/tools/model.ts';
import { filterTools } from '../stages/filter-tools.ts';
import { loadProject } from '../stages/load-project.ts';
import { resolveProject } from '../stages/resolve-agent.ts';
import { StageContext } from '../stages/stage.ts';
import { printDiagnostics } from './diagnostics-output.ts';
import type { SourceAgent } from './source-agent.ts';

export interface ReloadReport {
  added: string[];
  changed: string[];
  removed: string[];
}

export function watchForChanges(agent: SourceAgent, options: { configFile?: string; log: Logger; onReload?: (report: ReloadReport) => void }): () => void {
  const { config } = agent.project;
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  const touched = new Set<string>();

  const schedule = (path: string) => {
    touched.add(path);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const paths = [...touched];
      touched.clear();
      running = running.then(() => reload(agent, options, paths)).then(
        (report) => {
          if (report.added.length + report.changed.length + report.removed.length === 0) return;
          const parts = [['added', report.added], ['reloaded', report.changed], ['removed', report.removed]].filter(([, names]) => names.length).map(([verb, names]) => `${verb} ${(names as string[]).join(', ')}`);
          options.log.info(`tools ${parts.join('; ')}`);
          options.onReload?.(report);
        },
        (err: unknown) => options.log.warn(`reload failed: ${(err as Error).message}`),
      );
    }, 120);
  };

  watchers.push(watch(config.file, () => schedule(config.file)));
  for (const dir of config.toolDirs) {
    try {
      watchers.push(watch(dir.absolute, { recursive: true }, (_event, name) => schedule(name ? `${dir.absolute}/${name}` : dir.absolute)));
    } catch {
      options.log.warn(`cannot watch ${relative(process.cwd(), dir.absolute) || dir.absolute}; changes there need a restart`);
    }
  }
  return () => {
    clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}

async function reload(agent: SourceAgent, options: { configFile?: string; log: Logger }, paths: string[]): Promise<ReloadReport> {
  const ctx = new StageContext(process.cwd(), false);
  const project = await loadProject({ configFile: options.configFile }, ctx).catch(() => undefined);
  printDiagnostics(ctx.diagnostics);
  if (!project) return { added: [], changed: [], removed: [] };
  const fresh = filterTools(project.tools, { prod: false }).tools;
  const { resolved, code } = resolveProject(project, { tools: fresh });
  // forge_tool adds the tools it forges to the running registry.
  const factories = { ...runtimeFactories(resolved, code, { http: agent.http, adapters: agent.adapters, log: options.log }), registry: agent.registry };
  const toolFiles = new Set(project.tools.map((t) => t.file?.absolute).filter(Boolean));
  const supportChanged = paths.some((p) => !toolFiles.has(p) && p !== project.config.file && !/\.(ya?ml)$/.test(p));

  const report: ReloadReport = { added: [], changed: [], removed: [] };
  const freshNames = new Set(fresh.map((t) => t.spec.name));
  for (const current of agent.registry.list()) {
    // Forged tools are not in the sources: a reload keeps them.
    if (!freshNames.has(current.name) && !isForged(current)) {
      agent.registry.unregister(current.name);
      void agent.registry.retire(current);
      report.removed.push(current.name);
    }
  }
  for (const tool of fresh) {
    const current = agent.registry.get(tool.spec.name);
    const same = current && specKey(toSpec(current)) === specKey(tool.spec) && !(supportChanged && tool.spec.source);
    if (same) continue;
    let next;
    try {
      next = createTool(tool.spec, factories);
    } catch (err) {
      options.log.warn(`cannot load ${tool.spec.name}: ${(err as Error).message}`);
      continue;
    }
    const previous = agent.registry.replace(next, tool.origin);
    if (previous) {
      void agent.registry.retire(previous);
      report.changed.push(tool.spec.name);
    } else report.added.push(tool.spec.name);
  }
  agent.project = project;
  agent.manifest.tools = agent.registry.list().map(toSpec);
  return report;
}

function specKey(spec: ToolSpec): string {
  return JSON.stringify(spec);
}
