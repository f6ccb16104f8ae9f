/**
 * Commands made of subcommands (`forge tool ...`, `forge mcp ...`): each
 * subcommand in its own file, loaded on use. A usage mistake inside a
 * subcommand prints that subcommand's usage, not the parent's.
 */
import { didYouMean } from '../runtime/suggest.ts';
import type { Command } from './main.ts';
import { reportUsageError, UsageError } from './usage-error.ts';
import { ownValue } from '../runtime/own-value.ts';

/** A parent's subcommands, by name (`Subcommands<SubcommandName<'tool'>>` holds exactly command-names.ts's list). */
export type Subcommands<Name extends string = string> = Record<Name, { summary: string; load: () => Promise<Command> }>;

export function listSubcommands(subcommands: Subcommands): string {
  return Object.entries(subcommands)
    .map(([name, s]) => `  ${name.padEnd(10)} ${s.summary}`)
    .join('\n');
}

export async function runSubcommand(parent: string, subcommands: Subcommands, argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const known = `subcommands: ${Object.keys(subcommands).join(', ')}`;
  if (!name || name.startsWith('-')) throw new UsageError(name ? `"${name}" is not a ${parent} subcommand` : 'missing subcommand', known);
  const sub = ownValue(subcommands, name);
  if (!sub) throw new UsageError(`unknown subcommand "${name}"`, didYouMean(name, Object.keys(subcommands)) ?? known);
  const command = await sub.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(command.usage);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) return reportUsageError(err, command.usage, `${parent} ${name}`, rest);
    throw err;
  }
}
