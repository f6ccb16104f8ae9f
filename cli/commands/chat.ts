import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { AgentEvent, AgentOutcome } from '../../runtime/agent/agent-loop.ts';
import { NoModelError } from '../../runtime/agent/agent.ts';
import { missingApiKeys } from '../../runtime/agent/providers/create-model.ts';
import type { ApprovalRequest } from '../../runtime/guard/approver.ts';
import { createAgent } from '../../runtime/server/serve.ts';
import { parseCommand } from '../args.ts';
import { cliLogger } from '../cli-logger.ts';
import { reportDiagnostics } from '../command-failure.ts';
import { error } from '../../runtime/diagnostics.ts';
import { STOP_SIGNAL_NAMES, STOP_SIGNALS } from '../../runtime/stop-signals.ts';
import { loadSourceAgent } from '../source-agent.ts';
import { color as c } from '../terminal.ts';
import { TerminalStream, terminalLine, terminalText } from '../../runtime/telemetry/terminal-text.ts';

export const usage = `usage: forge chat [--dev] [--session NAME]

A conversation with the agent in this terminal, from the project's sources.
Each tool call and its result show inline; calls that need approval are
asked here. The conversation is kept in .forge/sessions/ under its session
name, so \`--session NAME\` picks it up again. Type /exit or Ctrl-D to leave.

options:
  --dev            include dev tools
  --session NAME   continue (or start) the named conversation
`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommand(argv, { dev: { type: 'boolean', default: false }, session: { type: 'string' } });
  const log = cliLogger(values.verbose);
  const source = await loadSourceAgent({ configFile: values.config, dev: values.dev, log, json: values.json });
  if (!source) return 1;
  const { project, manifest, registry, http } = source;
  if (manifest.model) {
    // Refuse before sending anything: a request without its key only comes back as a 401.
    const missing = missingApiKeys(manifest.model);
    const chain = 1 + (manifest.model.fallbacks?.length ?? 0);
    if (missing.length === chain) {
      const hint = (variable: string) => `export ${variable}=... (or ${variable}_FILE=a file holding it), or name the variable that holds the key with model.api_key_env in forge.yaml`;
      reportDiagnostics(values.json, missing.map(({ model, variable }) => error('FORGE_MODEL_KEY', `${variable} is not set (nor ${variable}_FILE): model ${model} needs its API key`, {}, hint(variable))));
      await registry.close();
      return 1;
    }
    for (const { model, variable } of missing) log.warn(`${variable} is not set: model ${model} will fail and the next one will be tried`);
  }
  // Ctrl-C (a signal where stdin is no terminal, or once readline has closed), SIGTERM, a closed terminal's SIGHUP:
  // the chat ends at once, and the tool processes of a call in flight with it (killed as the process exits,
  // process-tree.ts). Their default would end it with no 'exit' event, leaving them running in their own groups.
  for (const signal of STOP_SIGNAL_NAMES) process.once(signal, () => process.exit(128 + STOP_SIGNALS[signal]));
  // A person is here: a sub-tool that needs confirmation mid-call is asked too.
  const subApprover = { approve: async (request: ApprovalRequest) => /^y(es)?$/i.test(((await ask(`\n${c.yellow('?')} ${terminalLine(request.parents.join(' → '))} → ${terminalLine(request.tool)} ${whole(request.args)} (${terminalLine(request.reason)})? [y/N] `)) ?? '').trim()) };
  const agent = createAgent({ manifest, registry, workDir: project.config.workDir, http, log, subApprover });
  const session = values.session ?? `chat-${randomUUID()}`;
  const lines = createInterface({ input: process.stdin, terminal: Boolean(process.stdin.isTTY) });
  const queue: string[] = [];
  let waiting: ((line: string | undefined) => void) | undefined;
  let closed = false;
  lines.on('line', (line) => (waiting ? (waiting(line), (waiting = undefined)) : queue.push(line)));
  lines.on('close', () => {
    closed = true;
    waiting?.(undefined);
  });
  // The model's streamed answer; what it still holds is shown before anything else is.
  const answer = new TerminalStream();
  const ask = (prompt: string): Promise<string | undefined> => {
    process.stdout.write(answer.end() + prompt);
    if (queue.length) return Promise.resolve(queue.shift());
    if (closed) return Promise.resolve(undefined);
    return new Promise((resolve) => (waiting = resolve));
  };

  process.stdout.write(`${c.bold(manifest.agent_id)} ${c.dim(`— ${registry.list().length} tools, session ${session}; /exit to leave`)}\n`);
  const onEvent = (event: AgentEvent) => {
    if (event.type === 'text') return void process.stdout.write(answer.write(event.delta));
    process.stdout.write(answer.end());
    if (event.type === 'tool-call') process.stdout.write(`\n${c.cyan('→')} ${terminalLine(event.call.name)} ${c.dim(short(JSON.stringify(event.call.arguments)))}\n`);
    else if (event.type === 'tool-result') {
      const r = event.result;
      process.stdout.write(r.ok ? `${c.green('←')} ${terminalLine(event.call.name)} ${c.dim(short(typeof r.value === 'string' ? r.value : JSON.stringify(r.value)))}\n` : `${c.red('←')} ${terminalLine(event.call.name)} ${c.red(terminalLine(`${r.error.code}: ${r.error.message}`))}\n`);
    }
  };
  try {
    for (;;) {
      const line = await ask(`\n${c.bold('you')} › `);
      if (line === undefined || line.trim() === '/exit') break;
      if (!line.trim()) continue;
      process.stdout.write(`${c.bold('agent')} › `);
      let outcome: AgentOutcome;
      try {
        outcome = await agent.send(session, line, { onEvent, stream: true });
        // A person is here: ask for each call that needs approval, then go on.
        while (outcome.status === 'input-required') {
          const answers = new Map<string, boolean>();
          for (const request of outcome.requests) {
            const answer = await ask(`\n${c.yellow('?')} run ${terminalLine(request.tool)} ${whole(request.arguments)} (${terminalLine(request.reason)})? [y/N] `);
            answers.set(request.callId, /^y(es)?$/i.test((answer ?? '').trim()));
          }
          outcome = await agent.resume(session, answers, { onEvent, stream: true });
        }
      } catch (err) {
        process.stdout.write(`${answer.end()}\n${c.red('✘')} ${terminalText((err as Error).message)}\n`);
        if (err instanceof NoModelError) return 1;
        continue;
      }
      process.stdout.write(answer.end());
      // The note the loop adds is not streamed: shown after the answer, as the A2A task's text has it.
      if (outcome.status === 'max-iterations' || (outcome.status === 'completed' && outcome.endedEarly)) process.stdout.write(`\n${c.yellow(terminalLine(outcome.text.split('\n').at(-1)!))}`);
      process.stdout.write('\n');
    }
  } finally {
    lines.close();
    await registry.close();
  }
  return 0;
}

/**
 * The arguments a person is asked to approve, all of them: the model orders the keys and sizes the
 * values, so a cut line would show a long harmless value and hide the rest (a file_write's path
 * after 200 characters of content). Escaped, on one line, as what the model chose is everywhere.
 */
function whole(args: unknown): string {
  return terminalLine(JSON.stringify(args ?? {}));
}

/** A call's arguments or result on its one line, cut short; what the model or a tool chose is shown, not obeyed. */
function short(text: string): string {
  return terminalLine(text.length > 160 ? `${text.slice(0, 157)}...` : text);
}
