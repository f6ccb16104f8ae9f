import { rmSync } from 'node:fs';
import type { DiagnosticCode } from '../../runtime/diagnostic-codes.ts';
import { parseCommand } from '../args.ts';
import { reportFailure } from '../command-failure.ts';
import { adapterToolRefusal, findToolFile, scopeOf, toolsThereHint } from '../find-tool-file.ts';
import { chosenScope, SCOPE_OPTIONS } from '../scope-options.ts';
import { loadProjectForCli } from '../project-loader.ts';
import { color as c, errColor } from '../terminal.ts';
import { UsageError } from '../usage-error.ts';

export const usage = `usage: forge tool remove NAME [--scope local|user|global] [-l|-u|-g] [--force] [--json]

Deletes a YAML tool's file from a scope (default: local, the project's
tool_dirs). Python and TypeScript tools are yours to delete. A tool other
tools of the project call is kept, and they are named: they would stop
working. --force removes it anyway.

examples:
  forge tool remove greet
  forge tool remove summarize --scope user
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, { ...SCOPE_OPTIONS, force: { type: 'boolean', default: false } }, 1);
  const chosen = chosenScope(values);
  if (chosen === 'any') throw new UsageError('remove deletes from one scope', 'choose local, user or global');
  if (!positionals[0]) throw new UsageError('missing tool name');
  const { name, scopes } = scopeOf(positionals[0], chosen ?? (positionals[0].includes('/') ? undefined : 'local'));
  const { project } = await loadProjectForCli(values.config, { strict: false, json: true });
  const search = await findToolFile(name, scopes, project);
  const fail = (code: DiagnosticCode, message: string, hint?: string) => reportFailure(values.json, code, message, hint);
  if (search.adapter) {
    const { message, hint } = adapterToolRefusal(name, search.adapter);
    return fail('FORGE_TOOL_ADAPTER', message, hint);
  }
  if (!search.found) {
    if (search.builtin) return fail('FORGE_TOOL_BUILTIN', `"${name}" ships with Forge`, 'remove it from tools: in forge.yaml to disable it');
    return fail('FORGE_TOOL_UNKNOWN', `no tool named "${name}" in the ${scopes[0]} scope`, toolsThereHint(name, search.yamlNames, 'YAML tools'));
  }
  const { found } = search;
  if (found.kind !== 'yaml') return fail('FORGE_TOOL_NOT_YAML', `${found.display} is a ${found.kind} tool; Forge only removes the YAML tools it can write`, `delete ${found.display} yourself`);
  const dependents = (project?.tools ?? []).filter((t) => t.spec.composedOf?.includes(name) && t.spec.name !== name).map((t) => t.spec.name);
  // Deleting what other tools call breaks them: said before anything is lost, and done only when asked twice.
  if (dependents.length && !values.force) {
    return fail('FORGE_TOOL_IN_USE', `${dependents.join(', ')} ${dependents.length === 1 ? 'calls' : 'call'} ${name}; removing it would make ${dependents.length === 1 ? 'it' : 'them'} fail`, `change ${dependents.length === 1 ? 'that tool' : 'those tools'} first, or pass --force to remove ${name} anyway`);
  }
  rmSync(found.path);
  if (values.json) {
    process.stdout.write(JSON.stringify({ ok: true, name, scope: found.scope, path: found.path, dependents }, null, 2) + '\n');
    return 0;
  }
  process.stdout.write(`${c.green('✓')} removed ${name} (${found.display})\n`);
  if (dependents.length) process.stderr.write(`${errColor.yellow('▲')} these tools call ${name} and will fail until it is back: ${dependents.join(', ')}\n`);
  return 0;
}
