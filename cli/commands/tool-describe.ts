import { findCatalogEntry } from '../../runtime/tools/catalog.ts';
import { parseToolReference } from '../../runtime/tools/yaml/definition.ts';
import { toSpec, type ToolSpec } from '../../runtime/tools/model.ts';
import { DEFAULT_TIMEOUT_MS, formatDuration } from '../../runtime/tools/registry.ts';
import { didYouMean } from '../../runtime/suggest.ts';
import { unknownToolHint } from '../../runtime/tools/unknown-tool.ts';
import { parseCommand } from '../args.ts';
import { loadProjectForCli, outsideProjectHint } from '../project-loader.ts';
import { diagnosticJson, writeFailureJson } from '../../runtime/failure-json.ts';
import { errorsByToolName } from '../tool-file-errors.ts';
import { fieldRows, renderFields } from '../schema-text.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { error } from '../../runtime/diagnostics.ts';
import { color as c } from '../terminal.ts';
import { terminalStrings, terminalText } from '../../runtime/telemetry/terminal-text.ts';
import { UsageError } from '../usage-error.ts';

export const usage = `usage: forge tool describe NAME [--json]

Shows a tool's description, category, tags, inputs and outputs, and how to
run it. Works for the project's tools and for every tool Forge ships.

examples:
  forge tool describe word_count
  forge tool describe uuid_generate --json
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, {}, 1);
  const reference = positionals[0];
  if (!reference) throw new UsageError('missing tool name');
  // As forge tool run finds it: the project's tools, then the user and global scopes (or the scope named: user/NAME).
  const { scope, name } = parseToolReference(reference);
  if (scope && !['local', 'user', 'global'].includes(scope)) throw new UsageError(`unknown scope "${scope}"`, 'scopes: local, user, global');
  const { project, diagnostics } = await loadProjectForCli(values.config, { strict: false, json: values.json, extraRoots: scope === 'local' ? [] : [reference], scopesOnly: values.config === undefined });
  // A tool whose file has errors (it does not load, or another file defines it too) is not described as
  // if it were fine: forge tool run refuses it, and which file would be shown is a guess.
  const own = project ? (errorsByToolName(project, diagnostics).get(name) ?? []) : [];
  // The project's warnings text mode printed on stderr as it loaded: --json's `warnings`, as every command's.
  const warnings = diagnostics.filter((d) => d.severity === 'warning');
  if (own.length) {
    if (values.json) writeFailureJson(true, [...own, ...warnings]);
    else process.stderr.write(`${c.red('✘')} tool "${name}" cannot be described: its file has errors (above)\n`);
    return 1;
  }
  const tool = project?.tools.find((t) => t.spec.name === name && (scope === undefined || (scope === 'local' ? !t.scope : t.scope === scope)));
  let spec: ToolSpec | undefined = tool?.spec;
  let where = tool ? (tool.file ? tool.file.display : tool.origin) : undefined;
  let enabled = tool !== undefined;
  if (!spec) {
    const entry = findCatalogEntry(name);
    if (entry) {
      spec = toSpec((await entry.load()).default.spec);
      where = 'shipped with Forge';
      enabled = false;
    }
  }
  if (!spec) {
    const names = project?.tools.map((t) => t.spec.name) ?? [];
    const hint = didYouMean(name, names) ?? outsideProjectHint(values.config) ?? unknownToolHint(name, names);
    const unknown = error('FORGE_TOOL_UNKNOWN', `no tool named "${name}"`, {}, hint);
    // The project's own problems come after it: one of them may be why the tool is not there.
    if (values.json) writeFailureJson(true, [unknown, ...diagnostics]);
    else printDiagnostics([unknown]);
    return 1;
  }
  const guide = spec.category === 'builtin' ? (await findCatalogEntry(name)?.load())?.default.guide?.() : undefined;
  if (values.json) {
    process.stdout.write(JSON.stringify({ ok: true, enabled, tool: spec, ...(guide ? { guide } : {}), warnings: warnings.map(diagnosticJson) }, null, 2) + '\n');
    return 0;
  }
  // A description, a field, a path may be an MCP server's or an API document's text: shown, never obeyed.
  process.stdout.write(renderDescription(terminalStrings(spec), terminalText(where ?? ''), enabled) + '\n');
  if (guide) process.stdout.write('\n' + terminalText(guide).split('\n').map((line) => (line ? `  ${line}` : '')).join('\n') + '\n');
  return 0;
}

export function renderDescription(spec: ToolSpec, where: string, enabled: boolean): string {
  const lines = [`${c.bold(spec.name)}  ${c.dim(`(${spec.category})`)}${enabled ? '' : c.yellow('  not enabled in forge.yaml')}`, ''];
  for (const paragraph of spec.description.split('\n')) lines.push(`  ${paragraph}`);
  lines.push('');
  lines.push(`  tags      ${spec.tags.length ? spec.tags.join(', ') : c.dim('(none: treated as "run" by the approval policy)')}`);
  const how = spec.source?.kind === 'yaml' ? 'yaml' : spec.source ? `${spec.source.kind}, ${spec.source.style === 'execute' ? 'worker' : 'process per call'}` : '';
  lines.push(`  source    ${where}${how ? ` (${how})` : ''}`);
  lines.push(`  timeout   ${spec.timeoutMs !== undefined ? formatDuration(spec.timeoutMs) : `${formatDuration(DEFAULT_TIMEOUT_MS)} (default)`}`);
  if (spec.adapter) {
    const b = spec.adapter;
    lines.push(`  calls     ${b.kind === 'mcp' ? `tool "${b.tool}" of MCP server "${b.server}"` : `${b.method.toUpperCase()} ${b.path} of API "${b.api}"`}`);
  }
  if (spec.composedOf?.length) lines.push(`  calls     ${spec.composedOf.join(', ')}${spec.singleConfirmation ? ' (confirmed once)' : ''}`);
  if (spec.config && Object.keys(spec.config).length) lines.push(`  config    ${JSON.stringify(spec.config)}`);
  lines.push('', '  inputs', renderFields(fieldRows(spec.inputSchema)));
  if (spec.outputSchema) lines.push('', '  outputs', renderFields(fieldRows(spec.outputSchema)));
  const example = fieldRows(spec.inputSchema)
    .filter((r) => r.required)
    .map((r) => ` --param ${r.name}=${r.type === 'str' || r.type === 'Optional[str]' ? '"..."' : '...'}`)
    .join('');
  lines.push('', `  try it:   forge tool run ${spec.name}${example}`);
  return lines.join('\n');
}
