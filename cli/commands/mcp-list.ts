import { connectMcpServer, type McpConnectError } from '../../runtime/tools/adapters/mcp/connect.ts';
import { mcpToolFilter } from '../../stages/adapters/discover-mcp.ts';
import { error, type Diagnostic, type DiagnosticCode } from '../../runtime/diagnostics.ts';
import { diagnosticJson, failureJson, jsonDocument } from '../../runtime/failure-json.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { parseCommand } from '../args.ts';
import { describeTarget, loadMcpContext } from '../mcp-context.ts';
import { color as c, formatMs } from '../terminal.ts';
import { terminalLine, terminalText } from '../../runtime/telemetry/terminal-text.ts';
import { stderrExcerpt } from '../../runtime/exec/output-buffer.ts';

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
  error?: { code: DiagnosticCode; message: string; hint?: string; details?: string };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommand(argv, {});
  const loaded = await loadMcpContext(values.config, values.json);
  if (!loaded) return 1;
  const { config, mcp, warnings } = loaded;
  // forge.yaml's warnings: on stderr as text, the document's `warnings` with --json.
  if (!values.json) printDiagnostics(warnings);

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
        return { ...row, ok: false, ms: performance.now() - started, error: { code: e.code ?? 'FORGE_MCP_CONNECT', message: e.message, ...(e.hint ? { hint: e.hint } : {}), ...(e.details ? { details: e.details } : {}) } };
      }
    }),
  );
  const ok = rows.every((r) => r.ok);

  if (values.json) {
    const servers = rows.map((r) => ({ ...r, ms: Math.round(r.ms) }));
    // A server that failed is also one of the failure's errors, in the shape every command fails with.
    process.stdout.write(jsonDocument(ok ? { ok, servers, warnings: warnings.map(diagnosticJson) } : failureJson([...serverErrors(rows), ...warnings], { servers })));
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
      if (r.error!.details) process.stdout.write(c.dim(stderrExcerpt(terminalText(r.error!.details), 5).map((l) => `    | ${l}`).join('\n')) + '\n');
    }
  }
  return ok ? 0 : 1;
}

/** Each server that failed, as a diagnostic (its stderr tail stays in its row's error.details). */
function serverErrors(rows: readonly ServerRow[]): Diagnostic[] {
  return rows.flatMap((r) => (r.error ? [error(r.error.code, r.error.message, {}, r.error.hint)] : []));
}
