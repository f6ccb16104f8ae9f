import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { hasErrors } from '../../runtime/diagnostics.ts';
import { planInstall, type ExistingTool } from '../../stages/install/install-tools.ts';
import { refuseUnusableScopeDir } from '../../stages/forge-env-dirs.ts';
import { displayPath, scopeDir, ToolScope } from '../../stages/scopes.ts';
import { findConfigFile } from '../../stages/config/find-config.ts';
import { parseCommand } from '../args.ts';
import { reportFailure } from '../command-failure.ts';
import { diagnosticJson } from '../../runtime/failure-json.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { loadProjectForCli } from '../project-loader.ts';
import { chosenScope, SCOPE_OPTIONS } from '../scope-options.ts';
import { color as c } from '../terminal.ts';
import { UsageError } from '../usage-error.ts';

export const usage = `usage: forge tool install SOURCE [--scope local|user|global] [-l|-u|-g] [--deps] [--force] [--json]

Installs the tools SOURCE declares — the YAML tool files in its tools/
folder (or at its top) — into a scope: the project's first tool_dir
(local, the default in a project), ~/.forge/tools (user, the default
elsewhere) or the global scope. SOURCE is a folder, a git repository (a
URL, file://..., or the path of a bare repository; cloned with git) or an
npm package tarball (.tgz).

Each tool's dependencies (dependencies: summarize@^2.0.0, and the tools
its steps call) must be installed already, with a version in range; with
--deps, the ones that are not are installed too, from the sources the
source names for them in its forge-tools.yaml:

  tools: [meta]                 # optional: only these of its tool files
  sources:
    digest: ../digest.git       # folder, git repository or tarball; relative to the source

Everything is checked before anything is written: an unsatisfied version
installs nothing.

options:
  --scope S       local, user or global (-l, -u, -g)
  --deps          install missing dependencies from the sources named for them
  --force         replace a different tool of the same name in the scope

examples:
  forge tool install ../shared-tools
  forge tool install file:///srv/git/text-tools.git --scope user --deps
  forge tool install ./text-tools-1.2.0.tgz -g
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, { ...SCOPE_OPTIONS, deps: { type: 'boolean', default: false }, force: { type: 'boolean', default: false } }, 1);
  const source = positionals[0];
  if (!source) throw new UsageError('missing SOURCE', 'a folder, a git repository or an npm package tarball');
  const asked = chosenScope(values);
  if (asked === 'any') throw new UsageError('a tool is installed into one scope', 'choose local, user or global');
  const inProject = values.config !== undefined || findConfigFile(process.cwd()) !== undefined;
  const scope = asked ?? (inProject ? 'local' : 'user');

  const { project } = scope === 'local' || inProject ? await loadProjectForCli(values.config, { strict: false, json: true }) : { project: undefined };
  let dir: string;
  if (scope === 'local') {
    if (!project) throw new UsageError('no forge.yaml here or above, so there is no local scope', 'run it in a project, or pass --scope user');
    const toolDir = project.config.toolDirs[0];
    if (!toolDir) throw new UsageError('forge.yaml lists no tool_dirs to install into');
    dir = toolDir.absolute;
  } else {
    dir = scopeDir(scope);
    refuseUnusableScopeDir(scope, dir);
  }

  // What is installed already, in the order tools are looked up from the scope being installed into.
  const shared = ToolScope.shared();
  const order = (['local', 'user', 'global'] as const).slice(['local', 'user', 'global'].indexOf(scope));
  const existing = async (name: string): Promise<ExistingTool | undefined> => {
    for (const s of order) {
      if (s === 'local') {
        const t = project?.tools.find((x) => x.spec.name === name && !x.scope && x.file);
        if (t) return { name, version: t.yaml?.definition.version, where: t.file!.display };
      } else {
        const t = await shared[s].find(name);
        if (t?.result.spec) return { name, version: t.version, where: `${s}/${name} (${t.file.display})` };
      }
    }
    return undefined;
  };

  const plan = await planInstall(source, { deps: values.deps, existing });
  const diagnostics = [...plan.diagnostics];
  const writes: { file: string; text: string; name: string; version?: string }[] = [];
  const unchanged: string[] = [];
  // The file a tool of each name comes from in the scope installed into: another file of the same name would collide.
  const definedIn = async (name: string): Promise<string | undefined> =>
    scope === 'local' ? project?.tools.find((x) => x.spec.name === name && !x.scope && x.file)?.file!.absolute : (await shared[scope].find(name))?.file.absolute;
  for (const tool of plan.tools) {
    const file = join(dir, tool.fileName);
    const holder = await definedIn(tool.name);
    if (holder && resolve(holder) !== resolve(file)) {
      diagnostics.push({ severity: 'error', code: 'FORGE_INSTALL_EXISTS', message: `${shown(holder, scope)} already defines a tool named "${tool.name}"`, hint: 'rename or remove that tool first: two files of one name would break every build' });
      continue;
    }
    if (existsSync(file)) {
      if (readFileSync(file, 'utf8') === tool.text) {
        unchanged.push(tool.name);
        continue;
      }
      if (!values.force) {
        diagnostics.push({ severity: 'error', code: 'FORGE_INSTALL_EXISTS', message: `${shown(file, scope)} already holds a different "${tool.name}"`, hint: 'pass --force to replace it' });
        continue;
      }
    }
    writes.push({ file, text: tool.text, name: tool.name, version: tool.version });
  }

  if (!values.json) printDiagnostics(diagnostics);
  if (hasErrors(diagnostics)) return reportFailure(values.json, (diagnostics.find((d) => d.severity === 'error')?.code ?? 'FORGE_INSTALL_SOURCE'), `nothing was installed from ${source}`, undefined, diagnostics);
  mkdirSync(dir, { recursive: true });
  for (const w of writes) writeFileSync(w.file, w.text);

  const where = `${shown(dir, scope)} (${scope} scope)`;
  if (values.json) {
    process.stdout.write(JSON.stringify({ ok: true, scope, dir, installed: writes.map((w) => ({ name: w.name, version: w.version, file: w.file })), unchanged, warnings: diagnostics.map(diagnosticJson) }, null, 2) + '\n');
    return 0;
  }
  const list = writes.map((w) => `${w.name}${w.version ? ` ${w.version}` : ''}`).join(', ');
  process.stdout.write(writes.length ? `${c.green('✓')} installed ${list} into ${where}\n` : `${c.green('✓')} already installed in ${where}\n`);
  if (unchanged.length && writes.length) process.stdout.write(c.dim(`  unchanged: ${unchanged.join(', ')}\n`));
  return 0;
}

function shown(path: string, scope: string): string {
  return scope === 'local' ? relative(process.cwd(), path) || path : displayPath(path);
}
