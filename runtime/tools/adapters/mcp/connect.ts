/**
 * One connection to an MCP server through the official SDK client: a
 * process over stdio, or Streamable HTTP through the runtime's HTTP client
 * (so the egress policy sees every request). Connecting lists the server's
 * tools; a failure says which server, what went wrong and, for a process,
 * the end of what it printed on stderr.
 */
import { resolve } from 'node:path';
import type { Stream } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { EgressRefusedError } from '../../../net/egress-policy.ts';
import type { HttpClient } from '../../../net/http-client.ts';
import { createPolicyFetch } from '../../../net/policy-fetch.ts';
import { Client, getDefaultEnvironment, StdioClientTransport, StreamableHTTPClientTransport } from '../../../vendor/mcp.ts';
import type { JSONSchema, Logger } from '../../model.ts';
import { withoutUnprotectedPatterns } from '../../local-schema.ts';
import { compileResultSchema, describeArgumentError } from '../../validation.ts';
import { lastLines } from '../../../exec/output-buffer.ts';
import { bwrapNotFound } from '../../../exec/launcher-not-found.ts';
import { serverProcessCommand } from '../../../exec/server-sandbox.ts';
import { redactSecrets } from '../../../known-secrets.ts';
import { expandEnv, expandSecretArgs, expandSecretEnv, expandSecretHeaders, expandSecretUrl, MissingVariableError } from '../env-template.ts';
import type { McpServerSettings } from '../settings.ts';
import { pinnedCommand } from './pinned-package.ts';
import type { RemoteTool } from './remote-tool.ts';

export interface McpContext {
  http: HttpClient;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** Relative `cwd`s of stdio servers resolve against it. */
  workDir: string;
  /** Sent to the server as the client's version. */
  clientVersion?: string;
  /** Running as a built bundle: hints name the bundle's commands, not the forge CLI. */
  inBundle?: boolean;
}

export interface McpSession {
  client: Client;
  tools: RemoteTool[];
  /** The server's name and version, as it introduced itself. */
  info: { name: string; version: string };
  readonly closed: boolean;
  close(): Promise<void>;
}

export class McpConnectError extends Error {
  readonly code = 'FORGE_MCP_CONNECT';
  constructor(
    readonly server: string,
    message: string,
    readonly hint?: string,
    /** The end of the server's stderr, for a process. */
    details?: string,
  ) {
    // The server's words (its stderr, an error it sent) may quote a credential it was given: masked here, where every caller gets them.
    super(redactSecrets(`MCP server "${server}": ${message}`));
    this.name = 'McpConnectError';
    this.details = details === undefined ? undefined : redactSecrets(details);
  }

  readonly details?: string;
}

const STDERR_TAIL = 4_000;

/** Connects and lists the server's tools; every failure is an McpConnectError. */
export async function connectMcpServer(server: McpServerSettings, ctx: McpContext): Promise<McpSession> {
  let stderr = '';
  let stderrCut = false;
  const onStderr = (chunk: string) => {
    stderr += chunk;
    if (stderr.length <= STDERR_TAIL) return;
    stderr = stderr.slice(-STDERR_TAIL);
    stderrCut = true;
  };
  let transport: Transport;
  try {
    transport = createTransport(server, ctx, onStderr);
  } catch (err) {
    const hint = err instanceof MissingVariableError ? 'set the variable in the environment forge runs in' : 'check its url in forge.yaml and the variables it uses';
    throw new McpConnectError(server.name, (err as Error).message, hint);
  }
  const client = new Client({ name: 'forge', version: ctx.clientVersion ?? '0.0.0' }, { capabilities: {}, jsonSchemaValidator: serverSchemaValidator });
  let closed = false;
  client.onclose = () => {
    closed = true;
  };
  const stop = () => client.close().catch(() => {});
  try {
    await withDeadline(client.connect(transport, { timeout: server.timeout_ms }), server.timeout_ms, `did not finish connecting within ${server.timeout_ms} ms`);
    const tools = await listAllTools(client, server.timeout_ms);
    const version = client.getServerVersion();
    ctx.log.debug(`MCP server "${server.name}" connected: ${version?.name ?? '?'} ${version?.version ?? ''}, ${tools.length} tools`);
    return {
      client,
      tools,
      info: { name: version?.name ?? server.name, version: version?.version ?? '' },
      get closed() {
        return closed;
      },
      close: async () => {
        closed = true;
        await stop();
      },
    };
  } catch (err) {
    await stop();
    // Let the process's last words arrive before quoting them.
    await new Promise((r) => setTimeout(r, 20));
    // Whole lines only: a secret the cut went through would no longer be recognised, and its end would show.
    throw toConnectError(server, err, lastLines(stderr, STDERR_TAIL, stderrCut).trimStart(), ctx.inBundle, ctx.env);
  }
}

function createTransport(server: McpServerSettings, ctx: McpContext, onStderr: (chunk: string) => void): Transport {
  const where = `mcp.servers[${server.name}]`;
  if (server.transport === 'http') {
    const expanded = expandSecretUrl(server.url ?? '', ctx.env, `${where}.url`);
    // The template, not the expanded URL, goes into the message: a variable may hold a secret.
    if (!URL.canParse(expanded)) throw new Error(`${where}.url "${server.url}" does not make a valid URL`);
    const url = new URL(expanded);
    const headers = expandSecretHeaders(server.headers, ctx.env, `${where}.headers`);
    return new StreamableHTTPClientTransport(url, {
      fetch: createPolicyFetch(ctx.http),
      requestInit: { headers },
      reconnectionOptions: { maxRetries: 2, initialReconnectionDelay: 500, maxReconnectionDelay: 5_000, reconnectionDelayGrowFactor: 2 },
    });
  }
  const pinned = pinnedCommand(server, ctx.env);
  const cwd = resolve(ctx.workDir, server.cwd ?? '.');
  const { command, args } = serverProcessCommand(
    pinned?.command ?? expandEnv(server.command ?? '', ctx.env, `${where}.command`),
    pinned?.args ?? expandSecretArgs(server.args ?? [], ctx.env, `${where}.args`),
    cwd,
  );
  const transport = new StdioClientTransport({
    command,
    args,
    // The SDK's safe defaults (PATH, HOME, USER...), plus what forge.yaml passes; never the whole environment.
    env: { ...getDefaultEnvironment(), ...expandSecretEnv(server.env, ctx.env, `${where}.env`) },
    cwd,
    stderr: 'pipe',
  });
  (transport.stderr as Stream | null)?.on('data', (chunk: Buffer) => onStderr(chunk.toString('utf8')));
  return transport;
}

async function listAllTools(client: Client, timeout: number): Promise<RemoteTool[]> {
  const tools: RemoteTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

function toConnectError(server: McpServerSettings, err: unknown, stderr: string, inBundle = false, env: NodeJS.ProcessEnv = {}): McpConnectError {
  if (err instanceof EgressRefusedError) return new McpConnectError(server.name, err.message, err.refusal.hint);
  const e = err as NodeJS.ErrnoException;
  const details = stderr || undefined;
  // Inside bubblewrap a missing command is bwrap's words on stderr, where a bare spawn fails with ENOENT.
  if (server.transport === 'stdio' && (e.code === 'ENOENT' || bwrapNotFound(stderr))) {
    // "node /srv/index.js" as one command is a program of that whole name: its words belong in args:.
    const words = server.command?.trim().split(/\s+/) ?? [];
    const hint = words.length > 1 && !(server.args?.length) ? `command: is one program, started without a shell: write command: ${words[0]} and args: [${words.slice(1).join(', ')}]` : 'install it, or give its full path in mcp.servers[].command';
    return new McpConnectError(server.name, `cannot start "${server.command}": command not found`, hint, e.code === 'ENOENT' ? details : undefined);
  }
  let message = e.message ?? String(err);
  if (/connection closed/i.test(message) && server.transport === 'stdio') message = `the server process exited before it answered (${message})`;
  const hint =
    server.transport === 'stdio'
      ? inBundle
        ? `its stderr is above; FORGE_VERBOSE=1 node runtime.mjs tools starts it again${pinnedHint(server, env)}`
        : `run \`forge mcp test ${server.name}\` to see what the server prints`
      : `check that ${server.url} is a Streamable HTTP MCP endpoint and reachable`;
  return new McpConnectError(server.name, message, hint, details);
}

/**
 * What a pinned server's failure says of where it came from: one installed here started and stopped by
 * itself (its arguments or environment: a directory that is not there), one that is not was fetched by npx.
 */
function pinnedHint(server: McpServerSettings, env: NodeJS.ProcessEnv): string {
  const pinned = server.package;
  if (!pinned) return '';
  const installed = pinnedCommand(server, env)?.command === process.execPath;
  return installed
    ? ` (the installed ${pinned.name}@${pinned.version} started and exited: look at its arguments in forge.yaml, such as a directory that is not there from this work dir)`
    : ` (pinned ${pinned.name}@${pinned.version}, not installed here: npx fetched it; install it where FORGE_MCP_PACKAGES points to start without the network)`;
}

function withDeadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * What the SDK client checks a tool's structuredContent with: the server's
 * outputSchema as the registry checks it (local-schema.ts), not the SDK's
 * own ajv, which would run a pattern only the backtracking engine runs (a
 * lookahead in the server's outputSchema, against the result the same
 * server sends) on the agent's one thread.
 */
const serverSchemaValidator: jsonSchemaValidator = {
  getValidator<T>(schema: unknown) {
    const validate = compileResultSchema(withoutUnprotectedPatterns(schema as JSONSchema).schema);
    return (input: unknown) =>
      validate(input)
        ? { valid: true as const, data: input as T, errorMessage: undefined }
        : { valid: false as const, data: undefined, errorMessage: (validate.errors ?? []).map((e) => describeArgumentError(e)).join('; ') };
  },
};
