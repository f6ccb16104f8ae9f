/**
 * `forge`: finds the command and loads only its module, so `forge --help`
 * and a cached `forge build` stay instant. Exit codes: 0 ok, 1 build or tool
 * failure, 2 usage error.
 */
import { DiagnosticError, error, ForgeError } from '../runtime/diagnostics.ts';
import { redactSecrets } from '../runtime/known-secrets.ts';
import { didYouMean } from '../runtime/suggest.ts';
import { guardRegExpBacktracking } from '../runtime/regexp-safety.ts';
import { keepShimAnswers } from '../runtime/tools/custom/python-interpreter.ts';
import { defaultCacheDir } from '../stages/forge-paths.ts';
import { shimAnswersIn } from '../stages/python/shim-answers.ts';
import { writeFailureJson } from '../runtime/failure-json.ts';
import { reportDiagnostics } from './command-failure.ts';
import { reportUsageError, UsageError } from './usage-error.ts';
import { commandName, type CommandName } from './command-names.ts';
import { errColor as c } from './terminal.ts';

export interface Command {
  usage: string;
  run(argv: string[]): Promise<number>;
  /** The command has subcommands that print their own --help (forge tool add --help). */
  delegatesHelp?: boolean;
}

const COMMANDS: Record<CommandName, { summary: string; load: () => Promise<Command> }> = {
  init: { summary: 'create a new agent project', load: () => import('./commands/init.ts') },
  build: { summary: 'build the agent bundle (.forge-output/)', load: () => import('./commands/build.ts') },
  validate: { summary: 'check forge.yaml and the tools without building', load: () => import('./commands/validate.ts') },
  tool: { summary: 'list, describe and run tools from sources', load: () => import('./commands/tool.ts') },
  package: { summary: 'make an OCI image of the agent without a container daemon', load: () => import('./commands/package.ts') },
  run: { summary: 'serve the agent from sources (A2A, MCP, REST); --dev reloads tools', load: () => import('./commands/run.ts') },
  chat: { summary: 'talk to the agent in this terminal', load: () => import('./commands/chat.ts') },
  mcp: { summary: 'see and try the MCP servers in forge.yaml', load: () => import('./commands/mcp.ts') },
  doctor: { summary: 'check the tool sandbox, memory caps and secrets on this machine', load: () => import('./commands/doctor.ts') },
  version: { summary: 'print the Forge version', load: () => import('./commands/version.ts') },
};

export const MAIN_USAGE = `forge — build, run and ship AI agents

usage: forge <command> [options]

commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`)
  .join('\n')}

options for every command:
  -c, --config FILE   the forge.yaml to use (default: the nearest one at or above this directory)
  --json              machine-readable output
  -v, --verbose       more detail (and stack traces for internal errors)
  -h, --help          help for a command

Run "forge help <command>" for a command's options and examples.
`;

export async function main(argv: string[]): Promise<number> {
  // forge run and forge tool run validate schemas and search with patterns others wrote.
  guardRegExpBacktracking();
  let [name, ...rest] = argv;
  if (name === 'help') {
    if (!rest[0]) {
      process.stdout.write(MAIN_USAGE);
      return 0;
    }
    [name, ...rest] = [rest[0], ...rest.slice(1), '--help'];
  }
  if (!name || name === '--help' || name === '-h') {
    process.stdout.write(MAIN_USAGE);
    return name ? 0 : 2;
  }
  if (name === '--version') name = 'version';
  const known = commandName(name);
  const entry = known && COMMANDS[known];
  if (!entry) {
    const hint = didYouMean(name, Object.keys(COMMANDS));
    writeFailureJson(argv.includes('--json'), [error('FORGE_USAGE', `unknown command "${name}"`, {}, hint)]);
    process.stderr.write(`${c.red('error:')} unknown command "${name}"${hint ? ` (${hint})` : ''}\n\n${MAIN_USAGE}`);
    return 2;
  }
  const verbose = rest.includes('--verbose') || rest.includes('-v');
  // Read before parsing: a command line parseArgs refuses still asked for JSON.
  const json = rest.includes('--json');
  // A version manager's python3 shim is asked once per version choice, not once per command.
  keepShimAnswers(shimAnswersIn(defaultCacheDir()));
  const command = await entry.load();
  try {
    const subcommand = command.delegatesHelp && rest[0] !== undefined && !rest[0].startsWith('-');
    if (!subcommand && (rest.includes('--help') || rest.includes('-h'))) {
      process.stdout.write(command.usage);
      return 0;
    }
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) return reportUsageError(err, command.usage, name, rest);
    if (err instanceof DiagnosticError) {
      reportDiagnostics(json, err.diagnostics);
      return 1;
    }
    // An expected failure that keeps its code (a registry that cannot be reached): a diagnostic, not a crash.
    if (err instanceof ForgeError) {
      reportDiagnostics(json, [error(err.code, err.message, {}, err.hint)]);
      return 1;
    }
    // An unexpected failure's text may quote what others wrote (a gateway, a server): masked like a log line.
    const message = redactSecrets((err as Error).message ?? String(err));
    writeFailureJson(json, [error('FORGE_INTERNAL', message, {}, 'run with --verbose for the stack trace')]);
    process.stderr.write(`${c.red('error:')} ${message}\n`);
    if (verbose) process.stderr.write(`${redactSecrets((err as Error).stack ?? '')}\n`);
    else process.stderr.write(c.dim('(run with --verbose for the stack trace)\n'));
    return 1;
  }
}
