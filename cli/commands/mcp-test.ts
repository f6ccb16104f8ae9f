import { diagnosticJson, jsonDocument, toolFailureJson } from '../../runtime/failure-json.ts';
import type { Diagnostic } from '../../runtime/diagnostics.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import type { McpConnectError, McpSession } from '../../runtime/tools/adapters/mcp/connect.ts';
import { McpConnections } from '../../runtime/tools/adapters/mcp/connections.ts';
import { createMcpTool } from '../../runtime/tools/adapters/mcp/mcp-tool.ts';
import { ToolRegistry } from '../../runtime/tools/registry.ts';
import { ApprovalPolicy } from '../../runtime/guard/approval-policy.ts';
import type { ApprovalSettings } from '../../runtime/manifest.ts';
import { didYouMean } from '../../runtime/suggest.ts';
import { agentToolSpec, mcpToolFilter } from '../../stages/adapters/discover-mcp.ts';
import type { McpServerConfig } from '../../stages/config/adapter-config.ts';
import { parseCommand, parseTimeout } from '../args.ts';
import { describeTarget, loadMcpContext } from '../mcp-context.ts';
import { color as c, errColor, formatMs } from '../terminal.ts';
import { terminalLine, terminalText } from '../../runtime/telemetry/terminal-text.ts';
import { UsageError } from '../usage-error.ts';

export const usage = `usage: forge mcp test NAME [--call TOOL [--args JSON]] [--timeout T] [--json]

Connects to the MCP server NAME from forge.yaml, shows what it is and every
tool it offers (and which the agent leaves out), then — with --call — calls
one tool the way the agent would: arguments checked against its schema,
the result flattened, an error result reported as an error.

options:
  --call TOOL     the tool to call: its name on the server (read_file) or in the agent (fs__read_file)
  --args JSON     its arguments, as one JSON object (default {})
  --timeout T     stop the call after T: milliseconds (30000) or a duration (30s, 2m)
  --json          print the result as JSON

examples:
  forge mcp test fs
  forge mcp test fs --call list_directory --args '{"path": "/data"}'
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    call: { type: 'string' },
    args: { type: 'string' },
    timeout: { type: 'string' },
  }, 1);
  const name = positionals[0];
  if (!name) throw new UsageError('missing server name');
  const timeoutMs = parseTimeout(values.timeout);
  let args: unknown = {};
  if (values.args !== undefined) {
    if (!values.call) throw new UsageError('--args needs --call');
    try {
      args = JSON.parse(values.args);
    } catch (err) {
      throw new UsageError(`--args is not valid JSON: ${(err as Error).message}`);
    }
  }

  const loaded = await loadMcpContext(values.config, values.json);
  if (!loaded) return 1;
  const { config, mcp, warnings } = loaded;
  // forge.yaml's warnings: on stderr as text, the document's `warnings` with --json (as forge mcp list).
  if (!values.json) printDiagnostics(warnings);
  const server = config.mcpServers.find((s) => s.name === name);
  if (!server) {
    const names = config.mcpServers.map((s) => s.name);
    // forge.yaml's warnings stay in --json's document, as they do when the server is found.
    throw new UsageError(`no MCP server named "${name}" in ${config.displayFile}`, didYouMean(name, names) ?? (names.length ? `servers: ${names.join(', ')}` : 'add one under mcp.servers'), 'FORGE_USAGE', warnings);
  }

  // One connection serves the listing and the call, as in the agent.
  const connections = new McpConnections([server], mcp);
  try {
    return await testServer(connections, server, args, timeoutMs, values.call, values.json, config.workDir, config.approval, warnings);
  } finally {
    await connections.close();
  }
}

async function testServer(
  connections: McpConnections,
  server: McpServerConfig,
  args: unknown,
  timeoutMs: number | undefined,
  call: string | undefined,
  json: boolean,
  workDir: string,
  approval: ApprovalSettings,
  warnings: readonly Diagnostic[],
): Promise<number> {
  const warningsJson = warnings.map(diagnosticJson);
  const started = performance.now();
  let session: McpSession;
  try {
    session = await connections.session(server.name);
  } catch (err) {
    const e = err as McpConnectError;
    // This is the command the connect error's hint points to: here its stderr follows in full instead.
    const hint = e.hint?.includes(`forge mcp test ${server.name}`) ? 'its stderr, in full, is below' : e.hint;
    if (json) process.stdout.write(jsonDocument(toolFailureJson({ error: { code: e.code, message: e.message, hint, details: e.details } }, {}, {}, warnings)));
    else {
      process.stderr.write(`${errColor.red('✘')} ${terminalLine(e.message)}\n`);
      if (hint) process.stderr.write(`  ${errColor.cyan('hint:')} ${terminalLine(hint)}\n`);
      if (e.details) process.stderr.write(errColor.dim(terminalText(e.details).split('\n').map((l) => `  | ${l}`).join('\n')) + '\n');
    }
    return 1;
  }
  const connectMs = performance.now() - started;

  const filter = mcpToolFilter(server);
  const specs = session.tools.map((t) => agentToolSpec(server, t));
  const tools = session.tools.map((t, i) => ({ name: t.name, agentName: specs[i].name, used: filter.allows(t.name), description: t.description ?? '' }));
  if (!json) {
    process.stdout.write(`${c.green('✓')} connected to ${c.bold(server.name)} (${server.transport}: ${describeTarget(server)}) in ${formatMs(connectMs)}\n`);
    process.stdout.write(`  server  ${terminalLine(session.info.name)} ${terminalLine(session.info.version)}\n`);
    process.stdout.write(`  tools   ${tools.length}${tools.some((t) => !t.used) ? ` (${tools.filter((t) => !t.used).length} left out by tools.allow/deny)` : ''}\n`);
    const width = Math.max(...tools.map((t) => t.agentName.length), 4);
    for (const t of tools) {
      const line = `    ${t.agentName.padEnd(width)}  ${terminalLine(t.description.split('\n')[0].slice(0, 70))}`;
      process.stdout.write((t.used ? line : c.dim(`${line} (left out)`)) + '\n');
    }
  }
  if (!call) {
    if (json) process.stdout.write(jsonDocument({ ok: true, server: session.info, connectMs: Math.round(connectMs), tools, warnings: warningsJson }));
    return 0;
  }

  const spec = specs.find((s, i) => s.name === call || session.tools[i].name === call);
  if (!spec) {
    throw new UsageError(`MCP server "${server.name}" has no tool "${call}"`, didYouMean(call, session.tools.map((t) => t.name)), 'FORGE_USAGE', warnings);
  }
  // A tool the agent leaves out is not called here either: the agent would never call it.
  if (!filter.allows(session.tools[specs.indexOf(spec)].name)) {
    const message = `${spec.name} is left out by mcp.servers[${server.name}].tools (allow/deny), so the agent never calls it`;
    const hint = 'allow it in forge.yaml to test it';
    const result = { ok: false as const, error: { code: 'FORGE_TOOL_DENIED' as const, message, hint } };
    if (json) process.stdout.write(jsonDocument(toolFailureJson(result, {}, { server: session.info, tool: spec.name, result }, warnings)));
    else process.stderr.write(`${errColor.red('✘')} ${errColor.dim('FORGE_TOOL_DENIED')} ${message}\n  ${errColor.cyan('hint:')} ${hint}\n`);
    return 1;
  }
  // The call goes through a registry, as in the agent: the same argument checks, timeout, result and
  // approval rules. It is yours to run, as with forge tool run, but auto_deny still refuses it.
  const registry = new ToolRegistry({ workDir, approval: ApprovalPolicy.create(approval) });
  registry.register(createMcpTool(spec, connections), `forge mcp test ${server.name}`);
  const result = await registry.execute(spec.name, args, { timeoutMs, approved: true });
  if (json) {
    // `result` stays as the call answered; a failed call also gets the keys every failure has.
    const fields = { server: session.info, tool: spec.name, result };
    process.stdout.write(jsonDocument(result.ok ? { ok: true, ...fields, warnings: warningsJson } : toolFailureJson(result, {}, fields, warnings)));
  } else if (result.ok) {
    process.stdout.write(`\n${c.dim(`${spec.name} (${formatMs(result.durationMs ?? 0)}):`)}\n`);
    process.stdout.write((typeof result.value === 'string' ? result.value : JSON.stringify(result.value, null, 2)) + '\n');
  } else {
    process.stderr.write(`${errColor.red('✘')} ${errColor.dim(result.error.code)} ${terminalText(result.error.message)}\n`);
    if (result.error.hint) process.stderr.write(`  ${errColor.cyan('hint:')} ${terminalText(result.error.hint)}\n`);
  }
  return result.ok ? 0 : 1;
}
