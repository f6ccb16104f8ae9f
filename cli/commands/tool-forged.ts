import { ForgedStore, forgedRoot, type ForgedRecord } from '../../runtime/tools/emergent/forged-store.ts';
import { parseCommand } from '../args.ts';
import { reportDiagnostics, reportFailure } from '../command-failure.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { hasErrors, type Diagnostic } from '../../runtime/diagnostics.ts';
import { diagnosticJson } from '../../runtime/failure-json.ts';
import { loadConfigForCli } from '../project-loader.ts';
import { color as c } from '../terminal.ts';
import { terminalLine, terminalText } from '../../runtime/telemetry/terminal-text.ts';
import { sharedRecords, withSharedForged } from '../shared-forged.ts';
import { UsageError } from '../usage-error.ts';
import { resolve } from 'node:path';

export const usage = `usage: forge tool forged [list | show NAME | remove NAME] [--workdir DIR] [--json]

The tools the running agent forged (forge_tool, with emergent: in forge.yaml),
kept under .forge/forged/ in its work dir (default: forge.yaml's workdir).
A running agent registers them again when it starts. With a state store the
replicas share (FORGE_STATE_URL, or state: in forge.yaml, a postgres:// URL),
list and show read that store (what every replica serves), and remove takes
the tool away there too, so every replica drops it.

examples:
  forge tool forged
  forge tool forged show add_numbers
  forge tool forged remove add_numbers
  forge tool forged list --workdir /srv/agent
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, { workdir: { type: 'string' } }, 2);
  const [action = 'list', name] = positionals;
  if (action === 'list' && positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`, 'list takes no tool name; show and remove take one');
  const { opened, diagnostics } = await openAgentForgedStore(values.workdir, values.config);
  if (!opened) {
    // A forge.yaml with errors: those, not "no forge.yaml here".
    if (hasErrors(diagnostics) && !diagnostics.some((d) => d.code === 'FORGE_CONFIG_NOT_FOUND')) {
      reportDiagnostics(values.json, diagnostics);
      return 1;
    }
    return reportFailure(values.json, 'FORGE_CONFIG_NOT_FOUND', 'no forge.yaml here, and no --workdir', 'run it in the project, or pass --workdir DIR (the agent\'s work dir)');
  }
  // forge.yaml's warnings, as forge tool list shows them: on stderr as text, in every --json document (a failure's too).
  const warnings = diagnostics;
  if (!values.json) printDiagnostics(warnings);
  const warningsJson = warnings.map(diagnosticJson);
  const fail = (code: 'FORGE_STATE_CONFIG' | 'FORGE_TOOL_UNKNOWN', message: string, hint?: string) => reportFailure(values.json, code, message, hint, warnings);
  const { store } = opened;
  // With a store the replicas share, list and show what it holds (every replica serves that), not one work dir's copies.
  const fromStore = action === 'list' || action === 'show' ? await withSharedForged(opened.workDir, opened.state, sharedRecords) : undefined;
  if (fromStore && 'error' in fromStore) return fail('FORGE_STATE_CONFIG', fromStore.error.message, fromStore.error.hint);
  const shared = fromStore?.shared ? fromStore.value : undefined;
  const where = shared ? 'the shared state store' : store.root;
  if (action === 'list') {
    const records = shared ?? store.list();
    if (values.json) {
      // An object as forge tool list's: { ok, tools, warnings } (it was a bare array, unlike every other list).
      process.stdout.write(JSON.stringify({ ok: true, tools: records.map(summary), warnings: warningsJson }, null, 2) + '\n');
      return 0;
    }
    if (!records.length) process.stdout.write(`no forged tools in ${where}\n`);
    const width = Math.max(4, ...records.map((r) => r.request.name.length));
    for (const r of records) process.stdout.write(`${terminalLine(r.request.name).padEnd(width)}  ${r.request.implementation.mode.padEnd(7)}  ${r.tier.padEnd(7)}  ${terminalLine(r.request.description.split('\n')[0])}\n`);
    return 0;
  }
  if (action !== 'show' && action !== 'remove') throw new UsageError(`unknown action "${action}"`, 'list, show or remove');
  if (!name) throw new UsageError(`${action} needs a tool name`);
  const record = shared ? shared.find((r) => r.request.name === name) : store.load(name);
  if (action === 'show') {
    if (!record) return fail('FORGE_TOOL_UNKNOWN', `no forged tool named "${name}" in ${where}`, 'see them with `forge tool forged list`');
    // The record's keys as they were, with `ok` and `warnings` as every command's document has.
    process.stdout.write(values.json ? JSON.stringify({ ok: true, ...record, warnings: warningsJson }, null, 2) + '\n' : describe(record));
    return 0;
  }
  const removal = await withSharedForged(opened.workDir, opened.state, (records) => records.remove(name));
  if ('error' in removal) return fail('FORGE_STATE_CONFIG', removal.error.message, removal.error.hint);
  const removedHere = store.remove(name);
  const removedShared = removal.shared && removal.value;
  if (!removedHere && !removedShared) {
    return fail('FORGE_TOOL_UNKNOWN', `no forged tool named "${name}" in ${store.root}${removal.shared ? ' or in the shared state store' : ''}`, 'see them with `forge tool forged list`');
  }
  if (values.json) process.stdout.write(JSON.stringify({ ok: true, removed: name, shared: removedShared, warnings: warningsJson }) + '\n');
  else if (removedShared) process.stdout.write(`${c.green('✓')} removed forged tool ${name} from the shared state store: every replica drops it\n`);
  else process.stdout.write(`${c.green('✓')} removed forged tool ${name} (a running agent keeps it until it restarts)\n`);
  return 0;
}

export interface AgentForgedStore {
  store: ForgedStore;
  workDir: string;
  state?: string;
}

/**
 * The store of the agent's work dir, and the state store it shares: --workdir (the shared store then
 * from FORGE_STATE_URL alone: the project here may be another agent's), else forge.yaml's workdir and `state:`.
 * Only forge.yaml is read (no tool file, no MCP server); `diagnostics` are what it reported, for the command
 * to show (they are not printed here). Without --workdir, no store when forge.yaml is missing or has errors.
 */
export async function openAgentForgedStore(workdir: string | undefined, configFile: string | undefined): Promise<{ opened?: AgentForgedStore; diagnostics: Diagnostic[] }> {
  if (workdir) return { opened: { store: new ForgedStore(forgedRoot(resolve(workdir))), workDir: resolve(workdir) }, diagnostics: [] };
  const { config, diagnostics } = await loadConfigForCli(configFile, { json: true });
  if (!config || hasErrors(diagnostics)) return { diagnostics };
  return { opened: { store: new ForgedStore(forgedRoot(config.workDir)), workDir: config.workDir, state: config.state }, diagnostics };
}

function summary(r: ForgedRecord) {
  return { name: r.request.name, mode: r.request.implementation.mode, tier: r.tier, owner: r.owner, forgedAt: r.forgedAt, description: r.request.description, approved: r.verdict.approved };
}

/** A forged tool as its reviewer reads it. Every field but the dates is the model's (or the judge's) text: shown, never obeyed, so no escape sequence can hide a line of the code. */
function describe(r: ForgedRecord): string {
  const impl = r.request.implementation;
  const body = impl.mode === 'sandbox' ? impl.code : impl.steps.map((s) => `${s.tool} ${JSON.stringify(s.args ?? {})}${s.output_var ? ` → ${s.output_var}` : ''}`).join('\n');
  return [
    `${c.bold(terminalLine(r.request.name))}  (${impl.mode}, ${r.tier}${r.owner ? ` of ${terminalLine(r.owner)}` : ''}, forged ${r.forgedAt})`,
    '',
    `  ${terminalText(r.request.description).replace(/\n/g, '\n  ')}`,
    '',
    `  verdict   ${r.verdict.approved ? 'approved' : 'refused'}: ${terminalText(r.verdict.reasoning).replace(/\n/g, '\n            ')}`,
    `  tests     ${r.testResults.filter((t) => t.passed).length} of ${r.testResults.length} passed`,
    '',
    ...terminalText(body).split('\n').map((line) => `  | ${line}`),
    '',
  ].join('\n');
}
