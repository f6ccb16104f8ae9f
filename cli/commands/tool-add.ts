import { SECURITY_TAGS } from '../../runtime/guard/security-tags.ts';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { stringify } from 'yaml';
import type { DiagnosticCode } from '../../runtime/diagnostic-codes.ts';
import { refuseUnusableScopeDir } from '../../stages/forge-env-dirs.ts';
import { displayPath, scopeDir } from '../../stages/scopes.ts';
import { inlinePython } from '../../stages/python/inline-python.ts';
import { checkPythonSources } from '../../stages/python/python-source-check.ts';
import { readYamlToolText } from '../../stages/yaml-tool-file.ts';
import { reportFailure } from '../command-failure.ts';
import { diagnosticJson } from '../../runtime/failure-json.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { loadProjectForCli } from '../project-loader.ts';
import { color as c } from '../terminal.ts';
import { parseToolAddArgs, type ToolAddArgs } from '../tool-add-args.ts';
import { UsageError } from '../usage-error.ts';

export const usage = `usage: forge tool add NAME --description D (--bash C | --sh C | --python C | --run C | --step NAME C ...)
                      [--parameter NAME DESC [type=T] [required=true|false] [default=V] [pattern=R] ...]
                      [--tag T] [--platform P] [--timeout T] [--env K=V] [--version V]
                      [--scope local|user|global] [--force]

Writes a YAML tool — NAME.yaml in the project's first tool_dir (local, the
default), in ~/.forge/tools (user) or in the global scope — after checking it
exactly as the build will. {PARAM} in a command inserts a parameter, escaped
for where it stands; {step.output} inserts an earlier step's output.

options:
  --description D     what the tool does (models choose tools by it)
  --bash C, --sh C, --python C, --run C
                      the tool's one command (--run: a program and arguments, no shell)
  --step NAME C       a named step (repeat for several); C may start with bash:, sh:,
                      python:, run: or tool: (tool:NAME calls another tool with the same input)
  --parameter NAME DESC [type=string|number|integer|boolean|array|object] [required=true|false] [default=V]
                      [pattern=REGEXP] [minimum=N] [maximum=N]
                      a parameter (repeat for several); required unless it has a default; a
                      string's values must match pattern=, a number's lie within minimum= and maximum=
  --tag T             read, write, run (what the approval policy goes by), or a free tag
  --platform P        linux, macos, windows (repeat; default: every platform)
  --timeout T         stop a call after T: milliseconds (30000) or a duration (30s, 2m)
  --env K=V           an environment variable for the commands ({PARAM} and \${VAR} allowed)
  --version V         the tool's version, for other tools' dependencies (summarize@^1.0.0)
  --scope S           local (default), user or global
  --force             replace a tool file that exists

examples:
  forge tool add greet --description "Greets someone." --bash 'echo "Hello, {name}!"' \\
      --parameter name "Who to greet" --tag read
  forge tool add disk_usage --description "Size of a folder." --run 'du -sh {path}' \\
      --parameter path "The folder" default=. --tag read --platform linux --platform macos
  forge tool add build --description "Builds one target." --run 'make {target}' \\
      --parameter target "The target" pattern='^[a-z][a-z0-9_-]*$' --tag run
  forge tool add release_notes --description "Notes since a tag." --scope user \\
      --step log 'git log --oneline {since}..HEAD' --step notes 'tool:summarize' \\
      --parameter since "A tag or commit" --tag read
`;

export async function run(argv: string[]): Promise<number> {
  const args = parseToolAddArgs(argv);
  const text = renderToolFile(args);

  // Where the file goes: the project's first tool_dir, or a scope directory.
  let dir: string;
  let localNames: Set<string> | undefined;
  let projectRoot: string | undefined;
  if (args.scope === 'local') {
    const { project } = await loadProjectForCli(args.config, { strict: false, json: true });
    if (!project) throw new UsageError('no forge.yaml here or above, so there is no local scope', 'run it in a project, or pass --scope user');
    projectRoot = project.config.root;
    const toolDir = project.config.toolDirs[0];
    if (!toolDir) throw new UsageError('forge.yaml lists no tool_dirs to add the tool to');
    dir = toolDir.absolute;
    // Another file of the project may already declare the name (replacing NAME.yaml itself is --force's job).
    const own = [join(dir, `${args.name}.yaml`), join(dir, `${args.name}.yml`)];
    localNames = new Set(project.tools.filter((t) => !t.scope && !own.includes(t.file?.absolute ?? '')).map((t) => t.spec.name));
  } else {
    dir = scopeDir(args.scope);
    refuseUnusableScopeDir(args.scope, dir);
  }
  const file = join(dir, `${args.name}.yaml`);
  const shown = args.scope === 'local' ? relative(process.cwd(), file) || file : displayPath(file);

  const checked = await readYamlToolText(text, shown, args.name, file);
  // As the build does: a python: step's script must compile (its imports are the project's build's to judge).
  if (checked.spec) {
    const inline = inlinePython([{ yaml: { definition: checked.definition, locate: checked.locate } }]);
    const compiled = inline.length ? await checkPythonSources({ root: projectRoot ?? process.cwd(), files: [], toolDirs: [], cwd: process.cwd(), inline }) : [];
    checked.diagnostics.push(...compiled.filter((d) => d.code === 'FORGE_PY_SYNTAX'));
  }
  if (!args.json) printDiagnostics(checked.diagnostics);
  const refuse = (code: DiagnosticCode, message: string, hint?: string) => reportFailure(args.json, code, message, hint, checked.diagnostics);
  const firstError = checked.diagnostics.find((d) => d.severity === 'error');
  // The places above are in the file as it would have been written: nothing was.
  if (firstError) return refuse(firstError.code, `${args.name} was not added: the tool has errors (placed above in ${shown} as it would be; nothing was written)`);
  if (localNames?.has(args.name)) return refuse('FORGE_TOOL_COLLISION', `the project already has a tool named "${args.name}"`, 'choose another name');
  const existing = [file, file.replace(/\.yaml$/, '.yml')].find((f) => existsSync(f));
  if (!args.force && existing) return refuse('FORGE_FILE_EXISTS', `${existing === file ? shown : shown.replace(/\.yaml$/, '.yml')} already exists`, 'pass --force to replace it');

  mkdirSync(dir, { recursive: true });
  writeFileSync(file, text);
  if (args.json) {
    process.stdout.write(JSON.stringify({ ok: true, name: args.name, scope: args.scope, path: file, warnings: checked.diagnostics.map(diagnosticJson) }, null, 2) + '\n');
    return 0;
  }
  const example = args.parameters
    .filter((p) => p.default === undefined && p.required !== false)
    .map((p) => ` --param ${p.name}=...`)
    .join('');
  process.stdout.write(`${c.green('✓')} added ${args.name} to ${shown}\n  try it: forge tool run ${args.scope === 'local' ? '' : `${args.scope}/`}${args.name}${example} --show-command\n`);
  // Without a security tag the approval policy treats it as the riskiest kind: said here, not found out from the agent.
  if (!args.tags.some((t) => (SECURITY_TAGS as readonly string[]).includes(t))) {
    process.stdout.write(`  ${c.cyan('note:')} no --tag read, write or run: it counts as a run tool, which the agent asks a person to confirm unless forge.yaml's approval: says otherwise\n`);
  }
  return 0;
}

/** The YAML file for the tool, fields in the order a person reads them. */
function renderToolFile(args: ToolAddArgs): string {
  const data: Record<string, unknown> = { description: args.description };
  if (args.version) data.version = args.version;
  if (args.tags.length) data.tags = args.tags;
  if (args.platforms.length) data.platforms = args.platforms;
  if (args.timeout !== undefined) data.timeout = args.timeout;
  if (Object.keys(args.env).length) data.environment = args.env;
  if (args.parameters.length) {
    data.parameters = Object.fromEntries(
      args.parameters.map((p) => [
        p.name,
        {
          type: p.type,
          description: p.description,
          ...(p.required !== undefined ? { required: p.required } : {}),
          ...(p.default !== undefined ? { default: p.default } : {}),
          ...(p.pattern !== undefined ? { pattern: p.pattern } : {}),
          ...(p.minimum !== undefined ? { minimum: p.minimum } : {}),
          ...(p.maximum !== undefined ? { maximum: p.maximum } : {}),
        },
      ]),
    );
  }
  const step = (s: ToolAddArgs['steps'][number]) => ({ [s.kind]: s.command });
  if (args.steps.length === 1 && args.steps[0].name === 'main' && args.steps[0].kind !== 'tool') Object.assign(data, step(args.steps[0]));
  else data.steps = args.steps.map((s) => ({ name: s.name, ...step(s) }));
  return `# A Forge YAML tool (written by forge tool add). Reference: forge help tool\n${stringify(data, { lineWidth: 0 })}`;
}
