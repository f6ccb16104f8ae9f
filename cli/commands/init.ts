import { shellQuote } from '../../runtime/exec/shell-quote.ts';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fsFailure } from '../../runtime/tools/fs-results.ts';
import { forgePackageName, forgeVersion, templatesDir } from '../../stages/forge-paths.ts';
import { renderTemplate } from '../../stages/render-template.ts';
import { parseCommand } from '../args.ts';
import { reportFailure } from '../command-failure.ts';
import { UsageError } from '../usage-error.ts';
import { color as c } from '../terminal.ts';
import { filesUnder } from '../../runtime/dirent-dir.ts';

export const usage = `usage: forge init [DIR] [--id AGENT_ID]

Creates a working agent project in DIR (default: the current directory):
forge.yaml, a Python tool and a TypeScript tool in tools/, and .gitignore.
\`forge build\` succeeds on it straight away.

options:
  --id AGENT_ID   the agent's id (default: from the directory name, in lowercase
                  letters, digits and dashes: "My Agent" gives my-agent)

examples:
  forge init my-agent && cd my-agent && forge tool list
`;

/** Files in templates/init and where they go (npm drops files named .gitignore from packages). */
const RENAMES: Record<string, string> = { gitignore: '.gitignore' };

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, { id: { type: 'string' } }, 1);
  const dir = resolve(positionals[0] ?? '.');
  const again = positionals[0] === undefined ? 'forge init' : `forge init ${shellQuote(positionals[0])}`;
  const derived = values.id === undefined ? agentIdFrom(basename(dir)) : undefined;
  // A directory name with no letter a-z or digit in it ("!!!", "日本語") gives no id: asked for, not made up.
  if (derived === '') throw new UsageError(`cannot make an agent id from the directory name "${basename(dir)}": it has no letter a-z or digit 0-9`, `give one: ${again} --id my-agent`);
  const agentId = values.id ?? derived!;
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(agentId)) {
    throw new UsageError(`"${agentId}" is not a valid agent id`, `use lowercase letters, digits and dashes, at most 63, e.g. --id ${agentIdFrom(agentId) || 'my-agent'}`);
  }
  const shownDir = relative(process.cwd(), dir) || '.';
  const existing = join(shownDir, 'forge.yaml');
  if (existsSync(join(dir, 'forge.yaml'))) {
    const elsewhere = positionals[0] ? '' : ': forge init NAME makes a new one in NAME/';
    return reportFailure(values.json, 'FORGE_FILE_EXISTS', `${existing} already exists; not overwriting it`, `this is a project already (forge tool list, forge build)${elsewhere}`);
  }
  const source = join(templatesDir, 'init');
  const template = filesUnder(source).map((from) => {
    const rel = relative(source, from);
    const to = join(dir, RENAMES[rel] ?? rel);
    return { from, to, there: existsSync(to) };
  });
  // Never overwrite a user's file: the ones already there are kept, and said to be.
  const files = template.filter(({ there }) => !there);
  const kept = template.filter(({ there }) => there).map(({ to }) => to);
  // A file where the project needs a directory (DIR itself, or its tools/) is said before anything is written.
  const blocked = [...new Set(files.map(({ to }) => dirname(to)))].map(fileInTheWay).find((path) => path !== undefined);
  if (blocked) {
    const shown = relative(process.cwd(), blocked) || blocked;
    const hint = blocked === dir ? `forge init NAME makes the project in a new directory NAME/: pick a name no file has` : `move ${shellQuote(shown)} away, or run forge init in another directory`;
    return reportFailure(values.json, 'FORGE_FILE_NOT_DIRECTORY', `"${shown}" is a file, where forge init makes a directory; nothing was written`, hint);
  }
  const outcome = writeAll(files, { agent_id: agentId, schema_url: schemaUrl(dir) });
  if ('failed' in outcome) {
    const { code, message } = fsFailure(outcome.failed, relative(process.cwd(), outcome.at)).error;
    return reportFailure(values.json, code, `cannot write the new project: ${message}; nothing was left behind`, `fix that and run ${again} again`);
  }
  const written = outcome.written;
  const shownFiles = written.map((file) => relative(process.cwd(), file));
  const shownKept = kept.map((file) => relative(process.cwd(), file));
  if (values.json) {
    // forge init warns of nothing today; `warnings` is there as in every command's document.
    process.stdout.write(JSON.stringify({ ok: true, agent_id: agentId, files: shownFiles, kept: shownKept, warnings: [] }, null, 2) + '\n');
    return 0;
  }
  // An id made from the directory's name is said to be one: "My Agent" is not what forge.yaml holds.
  const from = derived !== undefined && derived !== basename(dir) ? c.dim(` (the agent id, from the directory name "${basename(dir)}"; --id sets another)`) : '';
  process.stdout.write(`${c.green('✓')} created ${c.bold(agentId)}${from}\n${shownFiles.map((f) => `  ${f}`).join('\n')}\n`);
  if (shownKept.length) {
    process.stdout.write(`${c.yellow('!')} kept what was already there (forge init overwrites nothing):\n${shownKept.map((f) => `  ${f}`).join('\n')}\n`);
    if (kept.includes(join(dir, '.gitignore'))) process.stdout.write(`  add .forge-output/, .forge-image/ and .forge/ to ${shownKept.find((f) => f.endsWith('.gitignore'))}: forge build and forge package write there\n`);
  }
  process.stdout.write('\nnext:\n');
  const cd = relative(process.cwd(), dir);
  if (cd) process.stdout.write(`  cd ${shellQuote(cd)}\n`);
  // The sample tool's run only when it is the sample: a file of the user's by that name may take other parameters.
  const greetWritten = written.includes(join(dir, 'tools', 'greet.py'));
  process.stdout.write(`  forge tool list\n${greetWritten ? '  forge tool run greet --param name=Ada\n' : ''}  forge build --prod\n`);
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

/**
 * An agent id from a name: accents dropped ("Café" gives cafe), every other run of characters an id
 * cannot hold one dash, at most 63 characters, no dash at either end. '' when nothing is left.
 */
function agentIdFrom(name: string): string {
  const ascii = name.normalize('NFKD').replace(/\p{M}+/gu, '');
  return ascii.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+/, '').slice(0, 63).replace(/-+$/, '');
}

/**
 * Renders the templates into place. Half a project is worse than none: when a write fails, what this run
 * wrote (files, and the directories it made) goes again, so that forge init can simply be run again.
 */
function writeAll(files: readonly { from: string; to: string }[], values: Record<string, string>): { written: string[] } | { failed: unknown; at: string } {
  const written: string[] = [];
  const made: string[] = [];
  for (const { from, to } of files) {
    try {
      const first = mkdirSync(dirname(to), { recursive: true });
      if (first) made.push(first);
      writeFileSync(to, renderTemplate(readFileSync(from, 'utf8'), values), { flag: 'wx' });
    } catch (err) {
      for (const file of written) rmSync(file, { force: true });
      for (const dir of made.reverse()) rmSync(dir, { recursive: true, force: true });
      return { failed: err, at: to };
    }
    written.push(to);
  }
  return { written };
}

/** The path, `dir` or one of its parents, that is a file (or anything but a directory); undefined when there is none. */
function fileInTheWay(dir: string): string | undefined {
  for (let path = dir; dirname(path) !== path; path = dirname(path)) {
    let stat;
    try {
      stat = statSync(path, { throwIfNoEntry: false });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') continue; // a parent is the file: found further up
      throw err;
    }
    if (stat) return stat.isDirectory() ? undefined : path;
  }
  return undefined;
}
