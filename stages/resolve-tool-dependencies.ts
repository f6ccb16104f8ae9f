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
import { error, note, withNotes, type Diagnostic, type Location } from '../runtime/diagnostics.ts';
import { CATALOG, findCatalogEntry } from '../runtime/tools/catalog.ts';
import { didYouMean } from '../runtime/suggest.ts';
import { parseToolReference } from '../runtime/tools/yaml/definition.ts';
import { declaredToolName } from './declared-tool-name.ts';
import type { SourceFile } from './discover-tools.ts';
import { toParsedTool } from './parse-yaml-tools.ts';
import { byName, type ProjectTool } from './project-tool.ts';
import { scopeDirProblem } from './forge-env-dirs.ts';
import { isScopeName, SCOPE_NAMES, ToolScope, type ScopeName, type ScopeTool, type SharedScope } from './scopes.ts';
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
  /** The files found in tool_dirs: one that declares a missing name but did not load is named in the error. */
  files?: readonly SourceFile[];
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
  const resolver = new DependencyResolver(tools, ctx, options.files ?? []);
  // Walk from the tools nobody calls, so each problem is reported with the whole chain that needs it.
  const called = new Set(tools.flatMap((t) => referencesOf(t).map((r) => r.name)));
  for (const tool of tools) if (!called.has(tool.spec.name)) resolver.enqueue(tool, [tool.spec.name]);
  await resolver.drain();
  // Tools only reachable through a cycle have no caller-free start: walk from each of them.
  for (const tool of tools) {
    if (resolver.visited.has(tool)) continue;
    resolver.enqueue(tool, [tool.spec.name]);
    await resolver.drain();
  }
  for (const root of options.extraRoots ?? []) await resolver.bringInRoot(root);
  return resolver.result();
}

/** The walk over the tools' references, and the scope tools it brings into the project. */
class DependencyResolver {
  readonly visited = new Set<ProjectTool>();
  private readonly scopes = ToolScope.shared();
  private readonly local: Map<string, ProjectTool>;
  private readonly pulled = new Map<string, ProjectTool>();
  private readonly reportedFiles = new Set<string>();
  private readonly searchedScopes = new Set<SharedScope>();
  private readonly queue: { tool: ProjectTool; chain: string[] }[] = [];

  constructor(
    private readonly tools: readonly ProjectTool[],
    private readonly ctx: StageContext,
    private readonly files: readonly SourceFile[],
  ) {
    this.local = new Map(tools.map((t) => [t.spec.name, t]));
  }

  enqueue(tool: ProjectTool, chain: string[]): void {
    this.queue.push({ tool, chain });
  }

  async drain(): Promise<void> {
    while (this.queue.length) {
      const { tool, chain } = this.queue.shift()!;
      if (this.visited.has(tool)) continue;
      this.visited.add(tool);
      for (const ref of referencesOf(tool)) await this.resolve(ref, chain);
    }
  }

  /** A name to bring in from the scopes as well (`forge tool run user/summarize`); not finding it is not an error. */
  async bringInRoot(root: string): Promise<void> {
    const { scope, name } = parseToolReference(root);
    if (scope !== undefined && !isScopeName(scope)) return;
    if (!scope && this.local.has(name)) return;
    const chosen = await this.firstIn(name, scope ? [scope] : SCOPE_NAMES);
    if (chosen?.scopeTool && !this.pulled.has(name)) {
      this.bringIn(chosen.scopeTool, [], { file: chosen.where });
      await this.drain();
    }
  }

  result(): ResolvedTools {
    const pulled = [...this.pulled.values()];
    return {
      tools: [...this.tools, ...pulled].sort(byName),
      scopeFiles: pulled.map((t) => t.file!),
      scopeDirs: Object.values(this.scopes).filter((s) => s.consulted).map((s) => s.dir),
    };
  }

  /**
   * A file in tool_dirs that declares `name` but gave no tool (its errors are reported): the tool is
   * there, broken, and "add it" would make a second one.
   */
  private brokenFileDeclaring(name: string): SourceFile | undefined {
    const loaded = new Set(this.tools.flatMap((t) => (t.file ? [t.file.absolute] : [])));
    const failed = (f: SourceFile) => this.ctx.diagnostics.some((d) => d.severity === 'error' && (d.file === f.display || d.file === f.relative || d.file === f.absolute));
    return this.files.find((f) => f.kind !== 'other' && !loaded.has(f.absolute) && failed(f) && declaredToolName(f) === name);
  }

  private async lookUp(name: string, scope: ScopeName): Promise<Candidate | undefined> {
    if (scope === 'local') {
      const tool = this.local.get(name);
      return tool && { scope, tool, version: tool.yaml?.definition.version, where: tool.file?.display ?? tool.origin };
    }
    this.searching(scope);
    const scopeTool = await this.scopes[scope].find(name);
    return scopeTool && { scope, scopeTool, version: scopeTool.version, where: scopeTool.file.display };
  }

  /**
   * A FORGE_HOME or FORGE_GLOBAL_TOOLS that cannot be a directory is said (FORGE_ENV_DIRECTORY) once, by
   * every command that searches its scope (build, validate, tool run, tool describe): the scope would read as
   * empty, and "no tool named" would be all the user saw.
   */
  private searching(scope: SharedScope): void {
    if (this.searchedScopes.has(scope)) return;
    this.searchedScopes.add(scope);
    const problem = scopeDirProblem(scope);
    if (problem) this.ctx.report(problem);
  }

  /** The first scope in `order` that has the name. The scopes after it are not searched, so they are no input of the build. */
  private async firstIn(name: string, order: readonly ScopeName[]): Promise<Candidate | undefined> {
    for (const scope of order) {
      const found = await this.lookUp(name, scope);
      if (found) return found;
    }
    return undefined;
  }

  /** Where else the name is (for an error): the other scopes' tools that pass `wanted`. */
  private async elsewhere(name: string, chosen: Candidate | undefined, wanted: (c: Candidate) => boolean): Promise<string[]> {
    return (await Promise.all(SCOPE_NAMES.map((scope) => this.lookUp(name, scope))))
      .filter((c): c is Candidate => c !== undefined && c.scope !== chosen?.scope && wanted(c))
      .map((c) => `${c.scope}/${name}${c.version ? ` ${c.version}` : ''} (${c.where})`);
  }

  /** Brings a scope tool into the project (once), reporting its file's problems and any name clash. */
  private bringIn(scopeTool: ScopeTool, chain: string[], at: Location): void {
    const { result, file, scope, name } = scopeTool;
    if (!this.reportedFiles.has(file.absolute)) {
      this.reportedFiles.add(file.absolute);
      this.ctx.report(...result.diagnostics);
    }
    const parsed = toParsedTool(file, result);
    if (!parsed) return;
    const existing = this.local.get(name) ?? this.pulled.get(name);
    if (existing) {
      if (existing.file?.absolute === file.absolute) return;
      this.ctx.report(
        withNotes(
          error('FORGE_TOOL_COLLISION', `tool "${name}" is defined twice`, at, 'a bundle holds one tool per name: rename one of them'),
          note('first defined here', existing.at),
          note(`and here, in the ${scope} scope (${scope}/${name}, needed by ${chain.join(' → ')})`, parsed.at),
        ),
      );
      return;
    }
    const tool: ProjectTool = { ...parsed, origin: `${file.display} (${scope} scope)`, schemaOrigin: 'generated', scope };
    this.pulled.set(name, tool);
    this.enqueue(tool, [...chain, name]);
  }

  private async resolve(ref: Reference, chain: string[]): Promise<void> {
    const problem = checkReference(ref);
    if (problem) return this.ctx.report(problem);
    const chosen = await this.firstIn(ref.name, ref.scope ? [ref.scope as ScopeName] : SCOPE_NAMES);
    const needed = [...chain, ref.text].join(' → ');
    if (!chosen) {
      const broken = ref.scope === undefined || ref.scope === 'local' ? this.brokenFileDeclaring(ref.name) : undefined;
      if (broken) return this.ctx.report(error('FORGE_TOOL_DEPENDENCY', `${needed}: ${broken.display} defines it but does not load (see its error)`, ref.at, `fix the error in ${broken.display}; the call to "${ref.name}" then finds it`));
      return this.ctx.report(missingDependency(ref, needed, await this.elsewhere(ref.name, chosen, () => true), [...this.local.keys(), ...this.pulled.keys()]));
    }
    if (ref.range !== undefined && !(chosen.version && semver.satisfies(chosen.version, ref.range))) {
      const satisfying = await this.elsewhere(ref.name, chosen, (c) => c.version !== undefined && semver.satisfies(c.version, ref.range!));
      return this.ctx.report(unsatisfiedRange(ref, needed, chosen, satisfying));
    }
    if (chosen.scopeTool) this.bringIn(chosen.scopeTool, chain, ref.at);
    else if (chosen.tool && !this.visited.has(chosen.tool)) this.enqueue(chosen.tool, [...chain, chosen.tool.spec.name]);
  }
}

/** A reference that cannot be looked up at all: an unknown scope, a range that is not semver. */
function checkReference(ref: Reference): Diagnostic | undefined {
  if (ref.scope !== undefined && !isScopeName(ref.scope)) return error('FORGE_TOOL_SCOPE', `unknown scope "${ref.scope}" in "${ref.text}"`, ref.at, `scopes: ${SCOPE_NAMES.join(', ')}`);
  if (ref.range !== undefined && !semver.validRange(ref.range)) return error('FORGE_TOOL_DEPENDENCY', `"${ref.range}" in "${ref.text}" is not a semver range`, ref.at, 'write a range such as ^1.0.0, ~1.2 or >=2.0.0');
  return undefined;
}

/** No scope (or not the one named) has the tool: where else it is, or how to add it. */
function missingDependency(ref: Reference, needed: string, others: string[], known: readonly string[]): Diagnostic {
  const builtin = findCatalogEntry(ref.name);
  // A name close to a tool the project has (or one Forge ships) is most likely misspelt: "add it" would make a second tool.
  const typo = !others.length && !builtin ? didYouMean(ref.name, [...known, ...CATALOG.map((e) => e.name)].filter((n) => n !== ref.name)) : undefined;
  const hint = others.length
    ? `found as ${others.join(', ')}`
    : builtin
      ? `"${ref.name}" ships with Forge: enable it under tools: in forge.yaml`
      : typo
        ? `${typo} (or add "${ref.name}" to tools/ if it is a new tool)`
        : `add it to tools/ (a .yaml, .py or .ts file), or to a scope: forge tool add ${ref.name} --scope user ...`;
  const where = ref.scope ? `the ${ref.scope} scope has no tool named` : 'no scope has a tool named';
  return error('FORGE_TOOL_DEPENDENCY', `${needed}: ${where} "${ref.name}"`, ref.at, hint);
}

/** The tool found does not satisfy the range asked for: which one elsewhere does. */
function unsatisfiedRange(ref: Reference, needed: string, chosen: Candidate, satisfying: string[]): Diagnostic {
  const found = chosen.version ? `${chosen.scope}/${ref.name} is ${chosen.version}` : `${chosen.scope}/${ref.name} has no version`;
  return error(
    'FORGE_TOOL_DEPENDENCY',
    `${needed}: ${found} (${chosen.where}), which does not satisfy ${ref.range}`,
    ref.at,
    satisfying.length ? `${satisfying.join(', ')} satisfies it: refer to it by scope, e.g. ${satisfying[0].split(' ')[0]}` : `no scope has a version of "${ref.name}" that satisfies ${ref.range}`,
  );
}

/**
 * The tools a tool calls or declares it needs, each with where it is
 * written: declared dependencies first (they say more: a scope, a range),
 * then the tools its steps call.
 */
export function referencesOf(tool: ProjectTool): Reference[] {
  const yaml = tool.yaml;
  if (!yaml) return (tool.spec.composedOf ?? []).map((name) => ({ name, text: name, at: tool.composedOfAt?.[name] ?? tool.at }));
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

