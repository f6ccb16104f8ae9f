/**
 * What --show-command and --dry-run print: each command exactly as it runs,
 * but for the secrets the runtime holds (a token env_passthrough hands the
 * tool, placed by ${API_TOKEN} in a step's environment): masked,
 * as in a log, since this output is pasted into issues and CI logs.
 */
import { redactSecrets } from '../runtime/known-secrets.ts';
import { shellWord } from '../runtime/tools/yaml/escape.ts';
import { SCRIPT_FILE, type PreparedStep } from '../runtime/tools/yaml/prepare-step.ts';

export interface ShownCommand {
  tool: string;
  step: string;
  when?: string;
  /** The program and its arguments (<script> stands for the script file). */
  argv?: string[];
  script?: string;
  cwd?: string;
  env?: Record<string, string>;
  /** A tool step: the tool it calls and the arguments. */
  call?: { tool: string; args: Record<string, unknown> };
  problem?: string;
}

export function toShown(tool: string, step: string, prepared: PreparedStep | undefined, workDir: string, extra: { when?: string; problem?: string } = {}): ShownCommand {
  const shown: ShownCommand = { tool, step, ...(extra.when ? { when: extra.when } : {}), ...(extra.problem ? { problem: extra.problem } : {}) };
  if (!prepared) return shown;
  if (prepared.kind === 'tool') return { ...shown, call: { tool: prepared.tool, args: JSON.parse(redactSecrets(JSON.stringify(prepared.args))) } };
  shown.argv = prepared.argv.map((a) => redactSecrets(a.split(SCRIPT_FILE).join('<script>')));
  if (prepared.script) shown.script = redactSecrets(prepared.script.text);
  if (prepared.cwd !== workDir) shown.cwd = prepared.cwd;
  if (Object.keys(prepared.toolEnv).length) shown.env = Object.fromEntries(Object.entries(prepared.toolEnv).map(([k, v]) => [k, redactSecrets(v)]));
  return shown;
}

export function renderShown(c: ShownCommand): string {
  const head = `▸ ${c.tool} › ${c.step}${c.when ? ` (when ${c.when})` : ''}`;
  if (c.problem) return `${head}: cannot run: ${c.problem}`;
  if (c.call) return `${head}: calls ${c.call.tool} ${JSON.stringify(c.call.args)}`;
  const lines = [`${head}: ${(c.argv ?? []).map((a) => (a === '<script>' ? a : shellWord(a))).join(' ')}`];
  if (c.cwd) lines.push(`    cwd: ${c.cwd}`);
  for (const [k, v] of Object.entries(c.env ?? {})) lines.push(`    env: ${k}=${shellWord(v)}`);
  if (c.script !== undefined) for (const line of c.script.replace(/\n$/, '').split('\n')) lines.push(`    │ ${line}`);
  return lines.join('\n');
}
