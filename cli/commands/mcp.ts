/** `forge mcp <subcommand>`: see and try the MCP servers forge.yaml configures. */
import { listSubcommands, runSubcommand, type Subcommands } from '../subcommands.ts';
import type { SubcommandName } from '../command-names.ts';

const SUBCOMMANDS: Subcommands<SubcommandName<'mcp'>> = {
  list: { summary: 'connect to every configured server and show its state and tools', load: () => import('./mcp-list.ts') },
  test: { summary: 'connect to one server, list its tools, and optionally call one', load: () => import('./mcp-test.ts') },
};

/** `forge mcp test --help` prints test's usage, not this one. */
export const delegatesHelp = true;

export const usage = `usage: forge mcp <subcommand> [options]

Debugs the MCP servers in forge.yaml (mcp.servers), outside the agent.

subcommands:
${listSubcommands(SUBCOMMANDS)}

examples:
  forge mcp list
  forge mcp test fs
  forge mcp test fs --call read_text_file --args '{"path": "/data/notes.txt"}'
`;

export function run(argv: string[]): Promise<number> {
  return runSubcommand('mcp', SUBCOMMANDS, argv);
}
