/** `forge tool <subcommand>`: each subcommand in its own file, loaded on use. */
import { didYouMean } from '../../runtime/suggest.ts';
import type { Command } from '../main.ts';
import { UsageError } from '../usage-error.ts';

const SUBCOMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  list: { summary: 'list the project\'s tools', load: () => import('./tool-list.ts') },
  describe: { summary: 'show a tool\'s description, inputs and outputs', load: () => import('./tool-describe.ts') },
  run: { summary: 'run a tool from sources, without a build or an LLM', load: () => import('./tool-run.ts') },
};

export const usage = `usage: forge tool <subcommand> [options]

Works on the project's sources: no build and no LLM needed.

subcommands:
${Object.entries(SUBCOMMANDS)
  .map(([name, s]) => `  ${name.padEnd(10)} ${s.summary}`)
  .join('\n')}

examples:
  forge tool list --category custom
  forge tool describe word_count
  forge tool run word_count --param text="hello world"
`;

export async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name.startsWith('-')) throw new UsageError(name ? `"${name}" is not a tool subcommand` : 'missing subcommand');
  const sub = SUBCOMMANDS[name];
  if (!sub) throw new UsageError(`unknown subcommand "${name}"`, didYouMean(name, Object.keys(SUBCOMMANDS)));
  const command = await sub.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(command.usage);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    // Usage errors of a subcommand print the subcommand's usage, not this one.
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}${err.hint ? ` (${err.hint})` : ''}\n\n${command.usage}`);
      return 2;
    }
    throw err;
  }
}
