import { readFileSync } from 'node:fs';
import { parseCommand } from '../args.ts';
import { reportFailure } from '../command-failure.ts';
import { adapterToolRefusal, findToolFile, scopeOf, toolsThereHint } from '../find-tool-file.ts';
import { chosenScope, SCOPE_OPTIONS } from '../scope-options.ts';
import { loadProjectForCli } from '../project-loader.ts';
import { color as c } from '../terminal.ts';
import { UsageError } from '../usage-error.ts';

export const usage = `usage: forge tool get NAME [--scope local|user|global|any] [-l|-u|-g|-a] [--json]

Prints a tool's file — a YAML tool as written, or a Python/TypeScript tool's
source — looking in the scope given, or in resolution order: the project's
tool_dirs, then the user scope (~/.forge/tools), then the global scope.
NAME may carry its scope: user/summarize.

examples:
  forge tool get greet
  forge tool get summarize --scope user
  forge tool get global/fetch --json
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, { ...SCOPE_OPTIONS }, 1);
  if (!positionals[0]) throw new UsageError('missing tool name');
  const chosen = chosenScope(values);
  const { name, scopes } = scopeOf(positionals[0], chosen === 'any' ? undefined : chosen);
  const { project } = scopes.includes('local') ? await loadProjectForCli(values.config, { strict: false, json: true }) : { project: undefined };
  const search = await findToolFile(name, scopes, project);
  if (search.adapter) {
    const { message, hint } = adapterToolRefusal(name, search.adapter);
    return reportFailure(values.json, 'FORGE_TOOL_ADAPTER', message, hint);
  }
  if (!search.found) {
    const message = search.builtin ? `"${name}" ships with Forge and has no file of its own` : `no tool named "${name}" in ${scopes.length === 1 ? `the ${scopes[0]} scope` : 'the project, the user scope or the global scope'}`;
    return reportFailure(values.json, search.builtin ? 'FORGE_TOOL_BUILTIN' : 'FORGE_TOOL_UNKNOWN', message, search.builtin ? `see it with forge tool describe ${name}` : toolsThereHint(name, search.names));
  }
  const { found } = search;
  const content = readFileSync(found.path, 'utf8');
  if (values.json) {
    process.stdout.write(JSON.stringify({ ok: true, name, scope: found.scope, path: found.path, kind: found.kind, content }, null, 2) + '\n');
    return 0;
  }
  process.stderr.write(c.dim(`# ${found.display} (${found.scope} scope)\n`));
  process.stdout.write(content.endsWith('\n') ? content : `${content}\n`);
  return 0;
}
