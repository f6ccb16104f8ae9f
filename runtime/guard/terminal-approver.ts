/**
 * Asks a person on the terminal: the question on stderr, the answer from
 * stdin. One question at a time, even when parallel steps ask together.
 */
import type { Readable, Writable } from 'node:stream';
import { isatty } from 'node:tty';
import { approveEverything, type ApprovalRequest, type Approver } from './approver.ts';
import { terminalLine } from '../telemetry/terminal-text.ts';

/**
 * Whether there is a person at a terminal to ask: stdin and stderr are terminals. Asked of the
 * descriptors, not of process.stdin, whose first use builds its stream (1-2 ms of every
 * `forge tool run`, which asks this before any tool runs and mostly never reads stdin).
 */
export function hasTerminal(): boolean {
  return isatty(0) && isatty(2);
}

/** Who confirms the calls made by a tool a person runs: everyone (--yes), the person at the terminal, or no one. */
export function personApprover(yes: boolean): Approver | undefined {
  return yes ? approveEverything : hasTerminal() ? new TerminalApprover() : undefined;
}

export class TerminalApprover implements Approver {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stderr,
  ) {}

  approve(request: ApprovalRequest): Promise<boolean> {
    const asked = this.queue.then(() => this.ask(request));
    this.queue = asked.catch(() => {});
    return asked;
  }

  private async ask(request: ApprovalRequest): Promise<boolean> {
    // The arguments may come from anywhere a step read (a web page, a file): shown, never obeyed by the terminal.
    const lines = [`\n? "${terminalLine(request.tool)}" needs your confirmation: ${terminalLine(request.reason)}`];
    if (request.parents.length) lines.push(`  called by: ${terminalLine(request.parents.join(' → '))}`);
    if (request.covers?.length) lines.push(`  this also confirms every call it makes to: ${terminalLine(request.covers.join(', '))}`);
    // All of them: a step's arguments may come from what it read, and a cut line would show its long
    // harmless part and hide the rest (the path after 600 characters of content).
    lines.push(`  arguments: ${terminalLine(JSON.stringify(request.args ?? {}))}`);
    this.output.write(lines.join('\n') + '\n');
    // Imported here: any node: module a bundled file imports statically loads when the bundle starts.
    const { createInterface } = await import('node:readline');
    return new Promise((resolve) => {
      const rl = createInterface({ input: this.input, output: this.output, terminal: false });
      let answered = false;
      rl.question('  run it? [y/N] ', (answer) => {
        answered = true;
        rl.close();
        resolve(/^\s*y(es)?\s*$/i.test(answer));
      });
      rl.once('close', () => {
        if (!answered) resolve(false);
      });
    });
  }
}
