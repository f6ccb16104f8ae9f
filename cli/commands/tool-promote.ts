import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseCommand } from '../args.ts';
import { reportFailure } from '../command-failure.ts';
import { forgedSources } from '../forged-source.ts';
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
  const { project } = await loadProjectForCli(values.config, { strict: false, json: values.json });
  if (!project) return reportFailure(values.json, 'FORGE_CONFIG_NOT_FOUND', 'no project here: promote writes into a project\'s tools/', 'run it next to forge.yaml');
  const opened = await openAgentForgedStore(values.workdir, values.config);
  const unknown = () => reportFailure(values.json, 'FORGE_TOOL_UNKNOWN', `no forged tool named "${name}"`, 'see them with `forge tool forged list` (pass --workdir for an agent that runs elsewhere)');
  if (!opened) return unknown();
  const { store } = opened;
  /** Writes the tool into the project and takes the forged one away: from `shared` too, when the replicas share a store. */
  const promote = async (shared?: ForgedRecords): Promise<number> => {
    // A shared store holds the tool as it is now (a work dir may keep an older forge of the name).
    const record = (shared && (await sharedRecord(shared, name))) ?? store.load(name);
    if (!record) return unknown();
    const taken = project.tools.find((t) => t.spec.name === name);
    if (taken && !values.force) return reportFailure(values.json, 'FORGE_TOOL_COLLISION', `the project already has a tool named "${name}" (${taken.origin})`, 'remove it first, or pass --force to write over its files');
    const dir = project.config.toolDirs[0].absolute;
    mkdirSync(dir, { recursive: true });
    const written: string[] = [];
    for (const source of forgedSources(record)) {
      const path = join(dir, source.file);
      if (existsSync(path) && !values.force) return reportFailure(values.json, 'FORGE_FILE_EXISTS', `${relative(process.cwd(), path)} exists`, 'pass --force to write over it');
      writeFileSync(path, source.text);
      written.push(relative(process.cwd(), path) || path);
    }
    await shared?.remove(name);
    store.remove(name);
    if (values.json) process.stdout.write(JSON.stringify({ ok: true, name, files: written }, null, 2) + '\n');
    else process.stdout.write(`${c.green('✓')} promoted ${name}: ${written.join(', ')}\n  the next \`forge build\` includes it for every caller\n`);
    return 0;
  };
  // One session with the shared store, if there is one: read, write the files, remove.
  const outcome = await withSharedForged(opened.workDir, opened.state, promote);
  if ('error' in outcome) return reportFailure(values.json, 'FORGE_STATE_CONFIG', outcome.error.message, outcome.error.hint);
  return outcome.shared ? outcome.value : promote();
}
