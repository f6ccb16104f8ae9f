import type { AdapterBinding } from '../../runtime/tools/adapters/settings.ts';
import { CATALOG } from '../../runtime/tools/catalog.ts';
import { CATEGORIES, type Category } from '../../runtime/tools/model.ts';
import { didYouMean } from '../../runtime/suggest.ts';
import { chosenScope, SCOPE_OPTIONS, SCOPE_USAGE } from '../scope-options.ts';
import { ToolScope, type SharedScope } from '../../stages/scopes.ts';
import { scopeDirProblem } from '../../stages/forge-env-dirs.ts';
import { parseCommand } from '../args.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { diagnosticsJson, writeFailureJson } from '../../runtime/failure-json.ts';
import { loadProjectForCli } from '../project-loader.ts';
import { color as c } from '../terminal.ts';
import { terminalLine } from '../../runtime/telemetry/terminal-text.ts';
import { UsageError } from '../usage-error.ts';

export const usage = `usage: forge tool list [--category C] [--scope local|user|global|any] [-l|-u|-g|-a] [--all] [--json]

Lists the project's tools from sources: custom tools in tool_dirs, the
tools enabled in forge.yaml, and the scope tools they need, with their
category and security tags. With --scope, lists one scope's tools: local
(the project's tool_dirs), user (~/.forge/tools) or global.

options:
  --category C   only tools of one category: builtin, adapter, dev, custom
${SCOPE_USAGE}
  --all          also list the tools Forge ships that forge.yaml does not enable,
                 and tools made for other platforms (not registered here)
  --json         print JSON

examples:
  forge tool list
  forge tool list --scope user
  forge tool list --all --json
`;

interface Row {
  name: string;
  category: string;
  tags: string[];
  description: string;
  enabled: boolean;
  source: string;
  scope?: string;
  version?: string;
  /** Why the tool is not registered here (made for other platforms). */
  note?: string;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommand(argv, {
    category: { type: 'string' },
    ...SCOPE_OPTIONS,
    all: { type: 'boolean', default: false },
  });
  const category = values.category as Category | undefined;
  if (category && !CATEGORIES.includes(category)) {
    throw new UsageError(`unknown category "${category}"`, didYouMean(category, CATEGORIES) ?? `categories: ${CATEGORIES.join(', ')}`);
  }
  const scope = chosenScope(values);

  let rows: Row[];
  // A FORGE_HOME or FORGE_GLOBAL_TOOLS that cannot be a directory: its scope would list as empty, in silence, where it is looked in.
  const lookedIn: SharedScope[] = scope === 'local' ? [] : scope === 'user' || scope === 'global' ? [scope] : ['user', 'global'];
  const scopeWarnings = lookedIn.flatMap((s) => scopeDirProblem(s) ?? []);
  let extra = diagnosticsJson(scopeWarnings);
  if (scope === 'user' || scope === 'global') {
    if (!values.json) printDiagnostics(scopeWarnings);
    rows = await scopeRows(scope as SharedScope, values.json);
  } else {
    const loaded = await loadProjectForCli(values.config, { strict: false, json: true, scopesOnly: scope === 'any' && values.config === undefined });
    // The project's search of a scope said it already when a tool of the project needs one: once, here.
    const diagnostics = [...loaded.diagnostics.filter((d) => d.code !== 'FORGE_ENV_DIRECTORY'), ...scopeWarnings];
    if (!values.json) printDiagnostics(diagnostics);
    const { project } = loaded;
    if (!project) {
      writeFailureJson(values.json, diagnostics);
      return 1;
    }
    extra = diagnosticsJson(diagnostics);
    rows = project.tools
      .filter((t) => (scope !== 'local' && scope !== 'any') || !t.scope)
      .map((t) => ({
        name: t.spec.name,
        category: t.spec.category,
        tags: t.spec.tags,
        description: t.spec.description,
        enabled: !t.unavailable,
        source: t.file ? t.file.display : t.spec.adapter ? adapterSource(t.spec.adapter) : 'forge',
        scope: t.scope ?? (t.file ? 'local' : 'forge'),
        ...(t.yaml?.definition.version ? { version: t.yaml.definition.version } : {}),
        ...(t.unavailable ? { note: `not for this platform: ${t.unavailable}` } : {}),
      }));
    if (!values.all) rows = rows.filter((r) => !r.note);
    // --scope any: the project's tools and every tool of the user and global scopes.
    if (scope === 'any') rows = [...rows, ...(await scopeRows('user', values.json)), ...(await scopeRows('global', values.json))];
    if (values.all && scope === undefined) {
      const enabled = new Set(rows.map((r) => r.name));
      for (const entry of CATALOG) {
        if (enabled.has(entry.name)) continue;
        const { spec } = (await entry.load()).default;
        rows.push({ name: spec.name, category: spec.category, tags: spec.tags, description: spec.description, enabled: false, source: 'forge', scope: 'forge', note: 'not enabled' });
      }
      rows.sort((a, b) => (a.name < b.name ? -1 : 1));
    }
  }
  const shown = rows.filter((r) => !category || r.category === category);

  if (values.json) {
    process.stdout.write(JSON.stringify({ ok: true, tools: shown, ...extra }, null, 2) + '\n');
    return 0;
  }
  if (shown.length === 0) {
    const where = scope === 'user' || scope === 'global' ? `the ${scope} scope has no tools yet: add one with forge tool add NAME --scope ${scope} ...` : 'no tools yet: add a docstring-annotated file or a YAML tool to tools/, or enable a builtin in forge.yaml';
    process.stdout.write(category ? `no ${category} tools\n` : `${where}\n`);
    return 0;
  }
  const nameWidth = Math.max(4, ...shown.map((r) => r.name.length));
  const catWidth = Math.max(8, ...shown.map((r) => r.category.length));
  const tagWidth = Math.max(4, ...shown.map((r) => r.tags.join(',').length));
  process.stdout.write(c.dim(`${'NAME'.padEnd(nameWidth)}  ${'CATEGORY'.padEnd(catWidth)}  ${'TAGS'.padEnd(tagWidth)}  DESCRIPTION`) + '\n');
  for (const r of shown) {
    const from = r.scope === 'user' || r.scope === 'global' ? ` (${r.scope} scope${r.version ? ` ${r.version}` : ''})` : '';
    const line = `${r.name.padEnd(nameWidth)}  ${r.category.padEnd(catWidth)}  ${r.tags.join(',').padEnd(tagWidth)}  ${firstSentence(r.description)}${from}`;
    process.stdout.write((r.note ? c.dim(`${line} (${r.note})`) : line) + '\n');
  }
  return 0;
}

function adapterSource(binding: AdapterBinding): string {
  return binding.kind === 'mcp' ? `mcp:${binding.server}` : `api:${binding.api}`;
}

/** A user or global scope's tools, files with errors included (their problems printed). */
async function scopeRows(scope: SharedScope, json: boolean): Promise<Row[]> {
  const tools = await ToolScope.shared()[scope].list();
  const rows: Row[] = [];
  for (const t of tools) {
    if (!json) printDiagnostics(t.result.diagnostics);
    const spec = t.result.spec;
    rows.push({
      name: t.name,
      category: spec?.category ?? 'custom',
      tags: spec?.tags ?? [],
      description: spec?.description ?? '(has errors)',
      enabled: spec !== undefined && !t.result.unavailable,
      source: t.file.display,
      scope,
      ...(t.version ? { version: t.version } : {}),
      ...(!spec ? { note: 'has errors' } : t.result.unavailable ? { note: `not for this platform: ${t.result.unavailable}` } : {}),
    });
  }
  return rows;
}

/** The description's first line, cut short; an MCP server's or an API document's text, shown and never obeyed. */
function firstSentence(text: string): string {
  const line = text.split('\n')[0];
  return terminalLine(line.length > 72 ? line.slice(0, 69) + '...' : line);
}
