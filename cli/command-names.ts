/**
 * The names of forge's commands, and of the subcommands of `forge tool` and
 * `forge mcp`: a closed list that the command tables are typed from
 * (main.ts, commands/tool.ts, commands/mcp.ts), so a table and this list
 * cannot disagree. It is small enough for the fast path (fast-path.ts) to
 * read before the compiled CLI loads, and names the code cache a command
 * line runs with.
 */
export const COMMAND_NAMES = ['init', 'build', 'validate', 'tool', 'package', 'run', 'chat', 'mcp', 'doctor', 'version'] as const;

export const SUBCOMMAND_NAMES = {
  tool: ['list', 'describe', 'run', 'add', 'get', 'remove', 'promote', 'forged', 'check', 'install'],
  mcp: ['list', 'test'],
} as const;

export type CommandName = (typeof COMMAND_NAMES)[number];
export type SubcommandName<Parent extends keyof typeof SUBCOMMAND_NAMES> = (typeof SUBCOMMAND_NAMES)[Parent][number];

/** The code caches a command line can run with (codeCacheVariant). */
export type CodeCacheVariant = 'help' | 'other' | CommandName | `tool-${SubcommandName<'tool'>}` | `mcp-${SubcommandName<'mcp'>}`;

/**
 * Which of the compiled CLI's code caches a command line runs with: its
 * command, and its subcommand where it has one (`tool-run`); `help` for
 * `forge` alone, `forge help …` and any --help; `other` for anything forge
 * does not know. V8 caches the functions compiled by the time the cache is
 * written, so a cache written by one command holds little of another's, and
 * each command would compile its own code at every run. The set is closed:
 * a mistyped command never writes a cache of its own.
 */
export function codeCacheVariant(argv: readonly string[]): CodeCacheVariant {
  const [name, sub] = argv;
  if (name === undefined || name === 'help' || argv.includes('--help') || argv.includes('-h')) return 'help';
  const command = commandName(name === '--version' ? 'version' : name);
  if (command === undefined) return 'other';
  if (command === 'tool' && sub !== undefined && isOneOf(sub, SUBCOMMAND_NAMES.tool)) return `tool-${sub}`;
  if (command === 'mcp' && sub !== undefined && isOneOf(sub, SUBCOMMAND_NAMES.mcp)) return `mcp-${sub}`;
  return command;
}

/** The command `word` names, if it names one (`constructor` and the like, which every object has, name none). */
export function commandName(word: string): CommandName | undefined {
  return isOneOf(word, COMMAND_NAMES) ? word : undefined;
}

function isOneOf<T extends string>(word: string, names: readonly T[]): word is T {
  return (names as readonly string[]).includes(word);
}
