import type { AdapterBinding } from '../../runtime/tools/adapters/settings.ts';
import { CATALOG } from '../../runtime/tools/catalog.ts';
import { CATEGORIES, type Category } from '../../runtime/tools/model.ts';
import { didYouMean } from '../../runtime/suggest.ts';
import { parseCommand } from '../args.ts';
import { diagnosticsJson, loadProjectForCli } from '../project-loader.ts';
import { color as c } from '../terminal.ts';
import { UsageError } from '../usage-error.ts';

export const usage = `usage: forge tool list [--category C] [--all] [--json]

Lists the project's tools from sources: custom tools in tool_dirs and the
tools enabled in forge.yaml, with their category and security tags.

options:
  --category C   only tools of one category: builtin, adapter, dev, custom
  --all          also list the tools Forge ships that forge.yaml does not enable
  --json         print JSON
`;

interface Row {
  name: string;
  category: string;
  tags: string[];
  description: string;
  enabled: boolean;
  source: string;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommand(argv, {
    category: { type: 'string' },
    all: { type: 'boolean', default: false },
  });
  const category = values.category as Category | undefined;
  if (category && !CATEGORIES.includes(category)) {
    throw new UsageError(`unknown category "${category}"`, didYouMean(category, CATEGORIES) ?? `categories: ${CATEGORIES.join(', ')}`);
  }
  const { project, diagnostics } = await loadProjectForCli(values.config, { strict: false, json: values.json });
  if (!project) {
    if (values.json) process.stdout.write(JSON.stringify({ ok: false, ...diagnosticsJson(diagnostics) }, null, 2) + '\n');
    return 1;
  }
  const rows: Row[] = project.tools.map((t) => ({
    name: t.spec.name,
    category: t.spec.category,
    tags: t.spec.tags,
    description: t.spec.description,
    enabled: true,
    source: t.file ? t.file.display : t.spec.adapter ? adapterSource(t.spec.adapter) : 'forge',
  }));
  if (values.all) {
    const enabled = new Set(rows.map((r) => r.name));
    for (const entry of CATALOG) {
      if (enabled.has(entry.name)) continue;
      const { spec } = (await entry.load()).default;
      rows.push({ name: spec.name, category: spec.category, tags: spec.tags, description: spec.description, enabled: false, source: 'forge' });
    }
    rows.sort((a, b) => (a.name < b.name ? -1 : 1));
  }
  const shown = rows.filter((r) => !category || r.category === category);

  if (values.json) {
    process.stdout.write(JSON.stringify({ ok: true, tools: shown, ...diagnosticsJson(diagnostics) }, null, 2) + '\n');
    return 0;
  }
  if (shown.length === 0) {
    process.stdout.write(category ? `no ${category} tools\n` : 'no tools yet: add a docstring-annotated file to tools/ or enable a builtin in forge.yaml\n');
    return 0;
  }
  const nameWidth = Math.max(4, ...shown.map((r) => r.name.length));
  const catWidth = Math.max(8, ...shown.map((r) => r.category.length));
  const tagWidth = Math.max(4, ...shown.map((r) => r.tags.join(',').length));
  process.stdout.write(c.dim(`${'NAME'.padEnd(nameWidth)}  ${'CATEGORY'.padEnd(catWidth)}  ${'TAGS'.padEnd(tagWidth)}  DESCRIPTION`) + '\n');
  for (const r of shown) {
    const line = `${r.name.padEnd(nameWidth)}  ${r.category.padEnd(catWidth)}  ${r.tags.join(',').padEnd(tagWidth)}  ${firstSentence(r.description)}`;
    process.stdout.write((r.enabled ? line : c.dim(`${line} (not enabled)`)) + '\n');
  }
  return 0;
}

function adapterSource(binding: AdapterBinding): string {
  return binding.kind === 'mcp' ? `mcp:${binding.server}` : `api:${binding.api}`;
}

function firstSentence(text: string): string {
  const line = text.split('\n')[0];
  return line.length > 72 ? line.slice(0, 69) + '...' : line;
}
