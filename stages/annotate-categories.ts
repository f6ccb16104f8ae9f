/**
 * Stage: annotate categories. Joins the custom tools found in tool_dirs with
 * the builtin/adapter/dev tools enabled in forge.yaml. Every tool's category
 * is the one it declares itself (its docstring, or its module's spec); this
 * stage checks that what is declared is allowed where it is, validates each
 * enabled tool's `config:` and rejects name collisions, naming both sources.
 */
import { error, formatLocation, note, warning, withNotes } from '../runtime/diagnostics.ts';
import { didYouMean } from '../runtime/suggest.ts';
import { CATALOG, findCatalogEntry, GROUPS, toolGroup } from '../runtime/tools/catalog.ts';
import { toSpec } from '../runtime/tools/model.ts';
import type { ProjectConfig, ToolEntry } from './config/project-config.ts';
import { pointerToPath } from './config/schema-errors.ts';
import type { ParsedSources } from './parse-docstrings.ts';
import { byName, type ProjectTool } from './project-tool.ts';
import type { StageContext } from './stage.ts';

export async function annotateCategories(config: ProjectConfig, parsed: ParsedSources, ctx: StageContext, adapterTools: readonly ProjectTool[] = []): Promise<ProjectTool[]> {
  const tools: ProjectTool[] = [];
  for (const { spec, file, at, composedOfAt, yaml, unavailable } of parsed.tools) {
    tools.push({ spec, file, at, origin: formatLocation(at), schemaOrigin: 'generated', ...(composedOfAt ? { composedOfAt } : {}), ...(yaml ? { yaml } : {}), ...(unavailable ? { unavailable } : {}) });
  }
  // MCP and OpenAPI tools, found by the discover-adapters stage: category adapter, declared by their binding.
  tools.push(...adapterTools);
  const customNames = new Set(tools.map((t) => t.spec.name));
  tools.push(...(await enabledTools(config, customNames, ctx)));

  // Collisions: the first definition wins the name; every later one is an error naming both.
  const seen = new Map<string, ProjectTool>();
  const unique: ProjectTool[] = [];
  for (const tool of tools) {
    const first = seen.get(tool.spec.name);
    if (first) {
      ctx.report(
        withNotes(
          error('FORGE_TOOL_COLLISION', `tool "${tool.spec.name}" is defined twice`, tool.at, 'rename one of them; tool names must be unique across builtin, adapter and custom tools'),
          note(`first defined here${kindOf(first)}`, first.at),
          ...(kindOf(tool) ? [note(`this definition${kindOf(tool)}`, tool.at)] : []),
        ),
      );
      continue;
    }
    seen.set(tool.spec.name, tool);
    unique.push(tool);
  }
  return unique.sort(byName);
}

async function enabledTools(config: ProjectConfig, customNames: Set<string>, ctx: StageContext): Promise<ProjectTool[]> {
  const out: ProjectTool[] = [];
  const enabled = new Map<string, ToolEntry>();
  for (const entry of config.tools) {
    const group = toolGroup(entry.name);
    if (group) {
      if (entry.config) ctx.report(error('FORGE_CONFIG_GROUP', `"${entry.name}" is a group of tools and takes no config`, entry.at, `configure its tools one by one: ${group.join(', ')}`));
      for (const name of group) if (!enabled.has(name)) enabled.set(name, { name, at: entry.at });
      continue;
    }
    if (enabled.has(entry.name)) {
      const previous = enabled.get(entry.name)!;
      if (previous.config && entry.config) {
        ctx.report(withNotes(error('FORGE_CONFIG_DUPLICATE', `tool "${entry.name}" is configured twice`, entry.at, 'keep one config: for a tool'), note('first configured here', previous.at)));
        continue;
      }
      if (!entry.config) {
        ctx.report(warning('FORGE_CONFIG_DUPLICATE', `tool "${entry.name}" is enabled twice`, entry.at));
        continue;
      }
    }
    enabled.set(entry.name, entry);
  }

  for (const entry of enabled.values()) {
    const catalogEntry = findCatalogEntry(entry.name);
    if (!catalogEntry) {
      const hint = customNames.has(entry.name)
        ? `"${entry.name}" is a custom tool in tool_dirs; those are always included, so remove it from tools:`
        : (didYouMean(entry.name, [...CATALOG.map((e) => e.name), ...Object.keys(GROUPS)]) ?? 'run `forge tool list --all` to see the tools Forge ships');
      ctx.report(error('FORGE_CONFIG_UNKNOWN_TOOL', `unknown tool "${entry.name}"`, entry.at, hint));
      continue;
    }
    const definition = (await catalogEntry.load()).default;
    const declared = definition.spec.category;
    if (declared === 'custom') {
      ctx.report(error('FORGE_TOOL_CATEGORY', `tool "${entry.name}" shipped with Forge declares category "custom"`, entry.at, 'this is a bug in Forge; please report it'));
      continue;
    }
    const config = entry.config ?? {};
    const before = ctx.diagnostics.length;
    if (entry.config) await checkToolConfig(entry, definition.configSchema, ctx);
    const loadErrors = ctx.diagnostics.slice(before).filter((d) => d.severity === 'error');
    const spec = toSpec({ ...definition.spec, ...definition.specFor?.(config), config });
    const tool: ProjectTool = { spec, builtin: { entry: catalogEntry, definition }, at: entry.at, origin: `${formatLocation(entry.at)} (${declared} tool)`, schemaOrigin: 'forge' };
    // Reported here, once, with its place in forge.yaml; the tool stays listed and its calls answer with it.
    if (loadErrors.length) tool.loadErrors = loadErrors;
    out.push(tool);
  }
  return out;
}

async function checkToolConfig(entry: ToolEntry, schema: Record<string, unknown> | undefined, ctx: StageContext) {
  // Where a field of the config is written; the tool's name when forge.yaml's place is not known.
  const at = (path: (string | number)[], target?: 'value' | 'key') => entry.configAt?.(path, target) ?? entry.at;
  if (!schema) {
    ctx.report(error('FORGE_CONFIG_TOOL', `tool "${entry.name}" takes no config`, at([], 'key'), `write it as "- ${entry.name}"`));
    return;
  }
  const { compileSchema, typeWords } = await import('../runtime/tools/validation.ts');
  // Defaults in the schema are filled into the config, so agent.json records what the tool will use.
  const validate = compileSchema(schema);
  if (validate(entry.config)) return;
  for (const e of validate.errors ?? []) {
    const path = pointerToPath(e.instancePath, entry.config);
    const field = path.join('.');
    const extra = e.keyword === 'additionalProperties' ? (e.params as { additionalProperty: string }).additionalProperty : undefined;
    const known = Object.keys((schema.properties as Record<string, unknown>) ?? {});
    const message = extra ? `unknown config field "${extra}" for tool "${entry.name}"` : `config${field ? `.${field}` : ''} of tool "${entry.name}" ${e.keyword === 'type' ? `must be ${typeWords((e.params as { type: string | string[] }).type)}` : e.message}`;
    // An unknown field at its key (where the misspelling is); a wrong value at the value.
    const where = extra ? at([...path, extra], 'key') : at(path);
    ctx.report(error('FORGE_CONFIG_TOOL', message, where, extra ? (didYouMean(extra, known) ?? `known fields: ${known.join(', ')}`) : undefined));
  }
}

/** What a tool's origin says beyond its location (" (builtin tool)", " (MCP server "fs")"), for a note. */
function kindOf(tool: ProjectTool): string {
  const where = formatLocation(tool.at);
  return where && tool.origin.startsWith(where) ? tool.origin.slice(where.length) : '';
}
