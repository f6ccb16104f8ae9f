import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseCommand } from '../args.ts';
import { reportFailure } from '../command-failure.ts';
import { forgedSources } from '../forged-source.ts';
import type { DiagnosticCode } from '../../runtime/diagnostic-codes.ts';
import { warning } from '../../runtime/diagnostics.ts';
import { diagnosticJson } from '../../runtime/failure-json.ts';
import { invalidInputNames } from '../../runtime/tools/emergent/input-names.ts';
import { loadProjectForCli } from '../project-loader.ts';
import { color as c } from '../terminal.ts';
import { UsageError } from '../usage-error.ts';
import type { ForgedRecords } from '../../runtime/state/store.ts';
import { sharedRecord, withSharedForged } from '../shared-forged.ts';
import { openAgentForgedStore } from './tool-forged.ts';

export const usage = `usage: forge tool promote NAME [--workdir DIR] [--force] [--json]

Writes a tool the running agent forged into the project's first tool dir as
an ordinary tool, so the next \`forge build\` includes it for every caller:
a composition as NAME.yaml (a YAML meta-tool), sandboxed code as NAME.js (a
JavaScript tool with a docstring), with its test cases in NAME.tests.json.
Sandboxed code leaves the forge sandbox: the command says what no longer
holds, the file keeps the fetch allowlist and has no read tag (review the
code before you add one).
The forged copy under .forge/forged/ is removed (the source tool replaces it),
and so is the record in a state store the replicas share (FORGE_STATE_URL, or
state: in forge.yaml), where the tool is read from when this work dir has no
copy: every replica drops it.

examples:
  forge tool promote add_numbers
  forge tool promote add_numbers --workdir /srv/agent
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, { workdir: { type: 'string' }, force: { type: 'boolean', default: false } }, 1);
  const name = positionals[0];
  if (!name) throw new UsageError('missing tool name');
  const { project, diagnostics } = await loadProjectForCli(values.config, { strict: false, json: values.json });
  // The project's warnings: printed on stderr as it loaded in text mode, in every --json document (a failure's too).
  const projectWarnings = values.json ? diagnostics.filter((d) => d.severity === 'warning') : [];
  const fail = (code: DiagnosticCode, message: string, hint?: string) => reportFailure(values.json, code, message, hint, projectWarnings);
  if (!project) return fail('FORGE_CONFIG_NOT_FOUND', 'no project here: promote writes into a project\'s tools/', 'run it next to forge.yaml');
  const { opened } = await openAgentForgedStore(values.workdir, values.config);
  const unknown = () => fail('FORGE_TOOL_UNKNOWN', `no forged tool named "${name}"`, 'see them with `forge tool forged list` (pass --workdir for an agent that runs elsewhere)');
  if (!opened) return unknown();
  const { store } = opened;
  /** Writes the tool into the project and takes the forged one away: from `shared` too, when the replicas share a store. */
  const promote = async (shared?: ForgedRecords): Promise<number> => {
    // A shared store holds the tool as it is now (a work dir may keep an older forge of the name).
    const record = (shared && (await sharedRecord(shared, name))) ?? store.load(name);
    if (!record) return unknown();
    const taken = project.tools.find((t) => t.spec.name === name);
    if (taken && !values.force) return fail('FORGE_TOOL_COLLISION', `the project already has a tool named "${name}" (${taken.origin})`, 'remove it first, or pass --force to write over its files');
    const dir = project.config.toolDirs[0].absolute;
    mkdirSync(dir, { recursive: true });
    // A tool stored before forge_tool checked input names may hold one the docstring cannot carry.
    const badNames = invalidInputNames(record.request.inputSchema);
    if (badNames.length) {
      return fail('FORGE_PROMOTE_INPUT_NAME', `forged tool "${name}" has inputs that are not parameter names: ${badNames.map((n) => JSON.stringify(n)).join(', ')}`, 'forge it again with inputs named with letters, digits, "_" and "-" (starting with a letter or "_")');
    }
    const sources = forgedSources(record);
    // Every file checked before any is written: a NAME.tests.json of the user's found after NAME.js was written left
    // a half-promoted tool, and the next try then refused the name that file had taken.
    const there = sources.files.map((source) => join(dir, source.file)).find((path) => existsSync(path));
    if (there && !values.force) return fail('FORGE_FILE_EXISTS', `${relative(process.cwd(), there)} exists; nothing was written`, 'pass --force to write over it');
    const written: string[] = [];
    for (const source of sources.files) {
      const path = join(dir, source.file);
      writeFileSync(path, source.text);
      written.push(relative(process.cwd(), path) || path);
    }
    await shared?.remove(name);
    store.remove(name);
    const notice = sources.notice && { code: 'FORGE_PROMOTE_UNSANDBOXED' as const satisfies DiagnosticCode, ...sources.notice };
    // `warnings` always, in the entries every command's warnings have (its details as one text, as a failed call's).
    const warnings = [...projectWarnings.map(diagnosticJson), ...(notice ? [{ ...diagnosticJson(warning(notice.code, notice.message, {}, notice.hint)), details: notice.details.join('\n') }] : [])];
    if (values.json) process.stdout.write(JSON.stringify({ ok: true, name, files: written, warnings }, null, 2) + '\n');
    else {
      process.stdout.write(`${c.green('✓')} promoted ${name}: ${written.join(', ')}\n  the next \`forge build\` includes it for every caller\n`);
      if (notice) {
        process.stdout.write(`${c.yellow('▲')} ${c.dim(notice.code)} ${notice.message}\n${notice.details.map((d) => `    ${d}\n`).join('')}  ${c.cyan('hint:')} ${notice.hint}\n`);
      }
    }
    return 0;
  };
  // One session with the shared store, if there is one: read, write the files, remove.
  const outcome = await withSharedForged(opened.workDir, opened.state, promote);
  if ('error' in outcome) return fail('FORGE_STATE_CONFIG', outcome.error.message, outcome.error.hint);
  return outcome.shared ? outcome.value : promote();
}
