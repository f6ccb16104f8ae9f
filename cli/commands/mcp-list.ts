import { connectMcpServer, type McpConnectError } from '../../runtime/tools/adapters/mcp/connect.ts';
import { mcpToolFilter } from '../../stages/adapters/discover-mcp.ts';
import { parseCommand } from '../args.ts';
import { describeTarget, loadMcpContext } from '../mcp-context.ts';
import { color as c, formatMs } from '../terminal.ts';
import { terminalLine, terminalText } from '../../runtime/telemetry/terminal-text.ts';

export const usage = `usage: forge mcp list [--json]

Connects to every MCP server in forge.yaml at once and shows, for each, how
it is reached, whether it is required, and what it answered: its name and
version and how many of its tools the agent uses, or why it failed.
Exits 1 if any server could not be reached.
`;

interface ServerRow {
  name: string;
  transport: string;
  target: string;
  required: boolean;
  ok: boolean;
  ms: number;
  server?: { name: string; version: string };
  tools?: { total: number; used: string[]; leftOut: string[] };
  error?: { message: string; hint?: string; details?: string };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommand(argv, {});
  const loaded = await loadMcpContext(values.config, values.json);
  if (!loaded) return 1;
  const { config, mcp } = loaded;

  const rows = await Promise.all(
    config.mcpServers.map(async (server): Promise<ServerRow> => {
      const started = performance.now();
      const row = { name: server.name, transport: server.transport, target: describeTarget(server), required: server.required };
      try {
        const session = await connectMcpServer(server, mcp);
        await session.close();
        const filter = mcpToolFilter(server);
        const names = session.tools.map((t) => t.name);
        return { ...row, ok: true, ms: performance.now() - started, server: session.info, tools: { total: names.length, used: names.filter((n) => filter.allows(n)), leftOut: names.filter((n) => !filter.allows(n)) } };
      } catch (err) {
        const e = err as McpConnectError;
        return { ...row, ok: false, ms: performance.now() - started, error: { message: e.message, ...(e.hint ? { hint: e.hint } : {}), ...(e.details ? { details: e.details } : {}) } };
      }
    }),
  );
  const ok = rows.every((r) => r.ok);

  if (values.json) {
    process.stdout.write(JSON.stringify({ ok, servers: rows.map((r) => ({ ...r, ms: Math.round(r.ms) })) }, null, 2) + '\n');
    return ok ? 0 : 1;
  }
  if (rows.length === 0) {
    process.stdout.write('no MCP servers in forge.yaml (add them under mcp.servers)\n');
    return 0;
  }
  for (const r of rows) {
    const mark = r.ok ? c.green('✓') : r.required ? c.red('✘') : c.yellow('▲');
    process.stdout.write(`${mark} ${c.bold(r.name)}  ${c.dim(`${r.transport}${r.required ? '' : ', optional'}`)}  ${r.target}\n`);
    if (r.ok) {
      const leftOut = r.tools!.leftOut.length ? `, ${r.tools!.leftOut.length} left out by tools.allow/deny` : '';
      process.stdout.write(`    ${terminalLine(r.server!.name)} ${terminalLine(r.server!.version)} · ${r.tools!.used.length} of ${r.tools!.total} tools used${leftOut} · ${formatMs(r.ms)}\n`);
      if (values.verbose) process.stdout.write(`    ${c.dim(terminalLine(r.tools!.used.join(', ')))}\n`);
    } else {
      process.stdout.write(`    ${terminalLine(r.error!.message)}\n`);
      if (r.error!.hint) process.stdout.write(`    ${c.cyan('hint:')} ${terminalLine(r.error!.hint)}\n`);
      if (r.error!.details) process.stdout.write(c.dim(terminalText(r.error!.details).split('\n').slice(-5).map((l) => `    | ${l}`).join('\n')) + '\n');
    }
  }
  return ok ? 0 : 1;
}
