import { shellQuote } from '../../runtime/exec/shell-quote.ts';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { forgePackageName, forgeVersion, templatesDir } from '../../stages/forge-paths.ts';
import { renderTemplate } from '../../stages/render-template.ts';
import { parseCommand } from '../args.ts';
import { reportFailure } from '../command-failure.ts';
import { UsageError } from '../usage-error.ts';
import { color as c } from '../terminal.ts';

export const usage = `usage: forge init [DIR] [--id AGENT_ID]

Creates a working agent project in DIR (default: the current directory):
forge.yaml, a Python tool and a TypeScript tool in tools/, and .gitignore.
\`forge build\` succeeds on it straight away.

options:
  --id AGENT_ID   the agent's id (default: from the directory name)

examples:
  forge init my-agent && cd my-agent && forge tool list
`;

/** Files in templates/init and where they go (npm drops files named .gitignore from packages). */
const RENAMES: Record<string, string> = { gitignore: '.gitignore' };

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, { id: { type: 'string' } }, 1);
  const dir = resolve(positionals[0] ?? '.');
  const agentId = values.id ?? agentIdFrom(basename(dir));
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(agentId)) {
    throw new UsageError(`"${agentId}" is not a valid agent id`, `use lowercase letters, digits and dashes, at most 63, e.g. --id ${agentIdFrom(agentId)}`);
  }
  const existing = join(relative(process.cwd(), dir) || '.', 'forge.yaml');
  if (existsSync(join(dir, 'forge.yaml'))) {
    const elsewhere = positionals[0] ? '' : ': forge init NAME makes a new one in NAME/';
    return reportFailure(values.json, 'FORGE_FILE_EXISTS', `${existing} already exists; not overwriting it`, `this is a project already (forge tool list, forge build)${elsewhere}`);
  }
  const source = join(templatesDir, 'init');
  const values_ = { agent_id: agentId, schema_url: schemaUrl(dir) };
  const written: string[] = [];
  for (const file of readdirSync(source, { recursive: true, withFileTypes: true })) {
    if (!file.isFile()) continue;
    const from = join(file.parentPath, file.name);
    const rel = relative(source, from);
    const to = join(dir, RENAMES[rel] ?? rel);
    if (existsSync(to)) continue; // never overwrite a user's file
    mkdirSync(resolve(to, '..'), { recursive: true });
    writeFileSync(to, renderTemplate(readFileSync(from, 'utf8'), values_));
    written.push(relative(process.cwd(), to));
  }
  if (values.json) {
    process.stdout.write(JSON.stringify({ ok: true, agent_id: agentId, files: written }, null, 2) + '\n');
    return 0;
  }
  process.stdout.write(`${c.green('✓')} created ${c.bold(agentId)}\n${written.map((f) => `  ${f}`).join('\n')}\n\nnext:\n`);
  const cd = relative(process.cwd(), dir);
  if (cd) process.stdout.write(`  cd ${shellQuote(cd)}\n`);
  process.stdout.write('  forge tool list\n  forge tool run greet --param name=Ada\n  forge build --prod\n');
  return 0;
}

/**
 * Where forge.yaml's editor schema comes from, on any machine that opens the
 * project: Forge installed in the project (node_modules) by a relative path;
 * otherwise this version's schema from the npm CDN, by package name and
 * version. Never a path into this machine's install.
 */
export function schemaUrl(projectDir: string): string {
  const name = forgePackageName();
  const local = join(projectDir, 'node_modules', name, 'schemas', 'forge.schema.json');
  if (existsSync(local)) return `./${relative(projectDir, local).split(sep).join('/')}`;
  return `https://unpkg.com/${name}@${forgeVersion()}/schemas/forge.schema.json`;
}

function agentIdFrom(name: string): string {
  const id = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 63);
  return id || 'my-agent';
}
