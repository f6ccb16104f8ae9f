/**
 * Stage: resolve tool dependencies. Every tool a tool calls (a YAML tool's
 * tool: steps, a TypeScript tool's composedOf) and every dependency a YAML
 * tool declares (`summarize@^1.0.0`, `user/fetch`) is looked up in the
 * project, then the user scope, then the global scope (or the scope named).
 * A tool found in a scope joins the project — it is bundled, so the agent
 * runs anywhere — and its own dependencies are resolved in turn.
 *
 * Each missing or unsatisfied dependency is an error that prints the chain
 * that needs it (meta → digest → summarize@^2.0.0) and where a tool of that
 * name can be found.
 */
import semver from 'semver';
import { error, type Location } from '../runtime/diagnostics.ts';
import { findCatalogEntry } from '../runtime/tools/catalog.ts';
import { parseToolReference } from '../runtime/tools/yaml/definition.ts';
import type { SourceFile } from './discover-tools.ts';
import { toParsedTool } from './parse-yaml-tools.ts';
import { byName, type ProjectTool } from './project-tool.ts';
import { isScopeName, SCOPE_NAMES, ToolScope, type ScopeName, type ScopeTool } from './scopes.ts';
import type { StageContext } from './stage.ts';

export interface ResolvedTools {
  tools: ProjectTool[];
  /** Scope files brought into the project (build cache inputs). */
  scopeFiles: SourceFile[];
  /** Scope directories that were searched (a tool added there can change the result). */
  scopeDirs: string[];
}

export interface ResolveOptions {
  /** Names to bring in from the scopes as well (`forge tool run user/summarize`); not finding them is not an error. */
  extraRoots?: string[];
}

export interface Reference {
  name: string;
  scope?: string;
  range?: string;
  /** As written: `user/summarize@^1.0.0`. */
  text: string;
  at: Location;
}

/** Where a name was found. */
interface Candidate {
  scope: ScopeName;
  version?: string;
  where: string;
  tool?: ProjectTool;
  scopeTool?: ScopeTool;
}

export async function resolveToolDependencies(tools: readonly ProjectTool[], ctx: StageContext, options: ResolveOptions = {}): Promise<ResolvedTools> {
  const scopes = ToolScope.shared();
  const local = new Map(tools.map((t) => [t.spec.name, t]));
  const pulled = new Map<string, ProjectTool>();
  const reportedFiles = new Set<string>();
  // Walk from the tools nobody calls, so each problem is reported with the whole chain that needs it.
  const called = new Set(tools.flatMap((t) => referencesOf(t).map((r) => r.name)));
  const queue: { tool: ProjectTool; chain: string[] }[] = tools.filter((t) => !called.has(t.spec.name)).map((tool) => ({ tool, chain: [tool.spec.name] }));
  const visited = new Set<ProjectTool>();

  const lookUp = async (name: string, scope: ScopeName): Promise<Candidate | undefined> => {
    if (scope === 'local') {
      const tool = local.get(name);
      return tool && { scope, tool, version: tool.yaml?.definition.version, where: tool.file?.display ?? tool.origin };
    }
    const scopeTool = await scopes[scope].find(name);
    return scopeTool && { scope, scopeTool, version: scopeTool.version, where: scopeTool.file.display };
  };
  /** The first scope in `order` that has the name. The scopes after it are not searched, so they are no input of the build. */
  const firstIn = async (name: string, order: readonly ScopeName[]): Promise<Candidate | undefined> => {
    for (const scope of order) {
      const found = await lookUp(name, scope);
      if (found) return found;
    }
    return undefined;
  };

  /** Brings a scope tool into the project (once), reporting its file's problems and any name clash. */
  const bringIn = (scopeTool: ScopeTool, chain: string[], at: Location): void => {
    const { result, file, scope, name } = scopeTool;
    if (!reportedFiles.has(file.absolute)) {
      reportedFiles.add(file.absolute);
      ctx.report(...result.diagnostics);
    }
    const parsed = toParsedTool(file, result);
    if (!parsed) return;
    const existing = local.get(name) ?? pulled.get(name);
    if (existing) {
      if (existing.file?.absolute === file.absolute) return;
      ctx.report(
        error('FORGE_TOOL_COLLISION', `tool "${name}" is defined twice: ${existing.file?.display ?? existing.origin} and ${file.display} (${scope}/${name}, needed by ${chain.join(' → ')})`, at, 'a bundle holds one tool per name: rename one of them'),
      );
      return;
    }
    const tool: ProjectTool = { ...parsed, origin: `${file.display} (${scope} scope)`, schemaOrigin: 'generated', scope };
    pulled.set(name, tool);
    queue.push({ tool, chain: [...chain, name] });
  };

  const resolve = async (ref: Reference, chain: string[]): Promise<void> => {
    const needed = [...chain, ref.text].join(' → ');
    if (ref.scope !== undefined && !isScopeName(ref.scope)) {
      ctx.report(error('FORGE_TOOL_SCOPE', `unknown scope "${ref.scope}" in "${ref.text}"`, ref.at, `scopes: ${SCOPE_NAMES.join(', ')}`));
      return;
    }
    if (ref.range !== undefined && !semver.validRange(ref.range)) {
      ctx.report(error('FORGE_TOOL_DEPENDENCY', `"${ref.range}" in "${ref.text}" is not a semver range`, ref.at, 'write a range such as ^1.0.0, ~1.2 or >=2.0.0'));
      return;
    }
    const chosen = await firstIn(ref.name, ref.scope ? [ref.scope] : SCOPE_NAMES);
    // The other scopes are searched only to say, in an error, where else the name is.
    const elsewhere = async (wanted: (c: Candidate) => boolean) =>
      (await Promise.all(SCOPE_NAMES.map((scope) => lookUp(ref.name, scope))))
        .filter((c): c is Candidate => c !== undefined && c.scope !== chosen?.scope && wanted(c))
        .map((c) => `${c.scope}/${ref.name}${c.version ? ` ${c.version}` : ''} (${c.where})`);

    if (!chosen) {
      const others = await elsewhere(() => true);
      const builtin = findCatalogEntry(ref.name);
      const hint = others.length
        ? `found as ${others.join(', ')}`
        : builtin
          ? `"${ref.name}" ships with Forge: enable it under tools: in forge.yaml`
          : `add it to tools/ (a .yaml, .py or .ts file), or to a scope: forge tool add ${ref.name} --scope user ...`;
      const where = ref.scope ? `the ${ref.scope} scope has no tool named` : 'no scope has a tool named';
      ctx.report(error('FORGE_TOOL_DEPENDENCY', `${needed}: ${where} "${ref.name}"`, ref.at, hint));
      return;
    }
    if (ref.range !== undefined && !(chosen.version && semver.satisfies(chosen.version, ref.range))) {
      const satisfying = await elsewhere((c) => c.version !== undefined && semver.satisfies(c.version, ref.range!));
      const found = chosen.version ? `${chosen.scope}/${ref.name} is ${chosen.version}` : `${chosen.scope}/${ref.name} has no version`;
      ctx.report(
        error(
          'FORGE_TOOL_DEPENDENCY',
          `${needed}: ${found} (${chosen.where}), which does not satisfy ${ref.range}`,
          ref.at,
          satisfying.length ? `${satisfying.join(', ')} satisfies it: refer to it by scope, e.g. ${satisfying[0].split(' ')[0]}` : `no scope has a version of "${ref.name}" that satisfies ${ref.range}`,
        ),
      );
      return;
    }
    if (chosen.scopeTool) bringIn(chosen.scopeTool, chain, ref.at);
    else if (chosen.tool && !visited.has(chosen.tool)) queue.push({ tool: chosen.tool, chain: [...chain, chosen.tool.spec.name] });
  };

  const drain = async () => {
    while (queue.length) {
      const { tool, chain } = queue.shift()!;
      if (visited.has(tool)) continue;
      visited.add(tool);
      for (const ref of referencesOf(tool)) await resolve(ref, chain);
    }
  };
  await drain();
  // Tools only reachable through a cycle have no caller-free start: walk from each of them.
  for (const tool of tools) {
    if (visited.has(tool)) continue;
    queue.push({ tool, chain: [tool.spec.name] });
    await drain();
  }
  for (const root of options.extraRoots ?? []) {
    const { scope, name } = parseToolReference(root);
    if (scope !== undefined && !isScopeName(scope)) continue;
    if (!scope && local.has(name)) continue;
    const chosen = await firstIn(name, scope ? [scope] : SCOPE_NAMES);
    if (chosen?.scopeTool && !pulled.has(name)) {
      bringIn(chosen.scopeTool, [], { file: chosen.where });
      await drain();
    }
  }

  const all = [...tools, ...pulled.values()].sort(byName);
  return {
    tools: all,
    scopeFiles: [...pulled.values()].map((t) => t.file!),
    scopeDirs: Object.values(scopes).filter((s) => s.consulted).map((s) => s.dir),
  };
}

/**
 * The tools a tool calls or declares it needs, each with where it is
 * written: declared dependencies first (they say more: a scope, a range),
 * then the tools its steps call.
 */
export function referencesOf(tool: ProjectTool): Reference[] {
  const yaml = tool.yaml;
  if (!yaml) return (tool.spec.composedOf ?? []).map((name) => ({ name, text: name, at: tool.at }));
  const { definition, locate } = yaml;
  const refs: Reference[] = definition.dependencies.map((dep) => ({
    name: dep.name,
    text: dep.text,
    at: locate(dep.path),
    ...(dep.scope ? { scope: dep.scope } : {}),
    ...(dep.range ? { range: dep.range } : {}),
  }));
  for (const step of definition.toolSteps) {
    refs.push({ name: step.name, text: step.scope ? `${step.scope}/${step.name}` : step.name, at: locate(step.path), ...(step.scope ? { scope: step.scope } : {}) });
  }
  return refs;
}

