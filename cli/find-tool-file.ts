/**
 * Finds the file of a tool by name for `forge tool get` and `forge tool
 * remove`: in the scope named, or in resolution order (the project's
 * tool_dirs, then the user scope, then the global scope).
 */
import { didYouMean } from '../runtime/suggest.ts';
import { someNames } from '../runtime/tools/unknown-tool.ts';
import { parseToolReference } from '../runtime/tools/yaml/definition.ts';
import type { Project } from '../stages/load-project.ts';
import { isScopeName, SCOPE_NAMES, ToolScope, type ScopeName } from '../stages/scopes.ts';
import { UsageError } from './usage-error.ts';

export interface FoundToolFile {
  scope: ScopeName;
  name: string;
  path: string;
  display: string;
  kind: string;
}

export interface ToolFileSearch {
  found?: FoundToolFile;
  /** Set when the project has the name but not as a file (a tool shipped with Forge). */
  builtin?: boolean;
  /** Set when the project has the name as an MCP server's tool or an API's operation: where forge.yaml brings it in. */
  adapter?: string;
  /** Every name in the scopes searched, for a suggestion. */
  names: string[];
  /** Those of them that are YAML tool files (what `forge tool remove` removes). */
  yamlNames: string[];
}

/** `scopeOption` (--scope) and a `scope/` prefix on the name must agree. */
export function scopeOf(reference: string, scopeOption: string | undefined): { name: string; scopes: readonly ScopeName[] } {
  const { scope, name } = parseToolReference(reference);
  const chosen = scope ?? scopeOption;
  if (scope && scopeOption && scope !== scopeOption) throw new UsageError(`"${reference}" names the ${scope} scope, but --scope says ${scopeOption}`);
  if (chosen === undefined) return { name, scopes: SCOPE_NAMES };
  if (!isScopeName(chosen)) throw new UsageError(`unknown scope "${chosen}"`, `scopes: ${SCOPE_NAMES.join(', ')}`);
  return { name, scopes: [chosen] };
}

export async function findToolFile(name: string, scopes: readonly ScopeName[], project: Project | undefined): Promise<ToolFileSearch> {
  const names: string[] = [];
  const yamlNames: string[] = [];
  const shared = ToolScope.shared();
  for (const scope of scopes) {
    if (scope === 'local') {
      const local = project?.tools.filter((t) => !t.scope) ?? [];
      names.push(...local.map((t) => t.spec.name));
      yamlNames.push(...local.filter((t) => t.file && (t.spec.source?.kind ?? 'yaml') === 'yaml').map((t) => t.spec.name));
      const tool = local.find((t) => t.spec.name === name);
      if (tool && !tool.file) return tool.spec.category === 'adapter' ? { adapter: tool.origin, names, yamlNames } : { builtin: true, names, yamlNames };
      if (tool?.file) return { found: { scope, name, path: tool.file.absolute, display: tool.file.display, kind: tool.spec.source?.kind ?? 'yaml' }, names, yamlNames };
      continue;
    }
    // The user and global scopes hold YAML tool files only.
    const tools = await shared[scope].list();
    names.push(...tools.map((t) => t.name));
    yamlNames.push(...tools.map((t) => t.name));
    const tool = tools.find((t) => t.name === name);
    if (tool) return { found: { scope, name, path: tool.file.absolute, display: tool.file.display, kind: 'yaml' }, names, yamlNames };
  }
  return { names, yamlNames };
}

/** The hint for a name no scope searched has: the one it likely meant, else the tools that are there (`kind`: which tools, as "YAML tools"). */
export function toolsThereHint(name: string, names: readonly string[], kind = 'tools'): string {
  const unique = [...new Set(names)].sort();
  return didYouMean(name, unique) ?? (unique.length ? `the ${kind} there: ${someNames(unique)}` : `there are no ${kind} there`);
}

/** The refusal for an adapter tool, which get and remove cannot act on: it has no file, forge.yaml's server or API entry brings it. */
export function adapterToolRefusal(name: string, origin: string): { message: string; hint: string } {
  return {
    message: `"${name}" is an adapter tool from ${origin}, with no file of its own`,
    hint: `see it with forge tool describe ${name}; to leave it out, list it in that server's tools: { deny: [...] } (an API's exclude:) in forge.yaml`,
  };
}
