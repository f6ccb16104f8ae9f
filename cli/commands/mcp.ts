/** `forge mcp <subcommand>`: see and try the MCP servers forge.yaml configures. */
import { didYouMean } from '../../runtime/suggest.ts';
import type { Command } from '../main.ts';
import { UsageError } from '../usage-error.ts';

const SUBCOMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  list: { summary: 'connect to every configured server and show its state and tools', load: () => import('./mcp-list.ts') },
  test: { summary: 'connect to one server, list its tools, and optionally call one', load: () => import('./mcp-test.ts') },
};

export const usage = `usage: forge mcp <subcommand> [options]

Debugs the MCP servers in forge.yaml (mcp.servers), outside the agent.

subcommands:
${Object.entries(SUBCOMMANDS)
  .map(([name, s]) => `  ${name.padEnd(10)} ${s.summary}`)
  .join('\n')}

examples:
  forge mcp list
  forge mcp test fs
  forge mcp test fs --call read_text_file --args '{"path": "/data/notes.txt"}'
`;

export async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name.startsWith('-')) throw new UsageError(name ? `"${name}" is not an mcp subcommand` : 'missing subcommand');
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
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}${err.hint ? ` (${err.hint})` : ''}\n\n${command.usage}`);
      return 2;
    }
    throw err;
  }
}
