/**
 * The MCP servers an agent uses, one connection each. `startAll` connects
 * them all at start-up (a required one that fails is reported as an error,
 * an optional one as a warning); `session` connects on first use otherwise,
 * and connects again when a server went away (a crashed process, a closed
 * HTTP session), once per call.
 *
 * They are shared by every tool of these servers and closed by whoever made
 * them (the adapter runtime), never by one tool: `close` at shutdown, or
 * `closeWhenIdle` for connections a hot reload replaced, which waits for the
 * calls running on them (`use`).
 */
import type { McpServerSettings } from '../settings.ts';
import { connectMcpServer, McpConnectError, type McpContext, type McpSession } from './connect.ts';

/** A server connected at start-up, or why it could not be. */
export type StartResult =
  | { server: McpServerSettings; session: McpSession; error?: undefined }
  | { server: McpServerSettings; session?: undefined; error: McpConnectError };

export class McpConnections {
  private readonly servers: Map<string, McpServerSettings>;
  private readonly sessions = new Map<string, Promise<McpSession>>();
  private closing = false;
  /** Calls running on these connections, and who waits for there to be none. */
  private running = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    servers: readonly McpServerSettings[],
    private readonly ctx: McpContext,
  ) {
    this.servers = new Map(servers.map((s) => [s.name, s]));
  }

  settings(name: string): McpServerSettings | undefined {
    return this.servers.get(name);
  }

  /** The live session with `name`, connecting (again) when there is none; rejects with an McpConnectError. */
  async session(name: string): Promise<McpSession> {
    const server = this.servers.get(name);
    if (!server) throw new McpConnectError(name, 'is not configured in this agent');
    if (this.closing) throw new McpConnectError(name, 'the agent is shutting down');
    const current = this.sessions.get(name);
    if (current) {
      const session = await current.catch(() => undefined);
      if (session && !session.closed) return session;
      if (current === this.sessions.get(name)) this.sessions.delete(name);
      if (!session) return this.session(name);
      // Asked again after the wait: a server started once close() has run would never be stopped.
      if (this.closing) throw new McpConnectError(name, 'the agent is shutting down');
      this.ctx.log.warn(`MCP server "${name}" went away; connecting again`);
    }
    const connecting = connectMcpServer(server, this.ctx);
    this.sessions.set(name, connecting);
    // A failed attempt is not cached: the next call tries again.
    connecting.catch(() => {
      if (this.sessions.get(name) === connecting) this.sessions.delete(name);
    });
    return connecting;
  }

  /** Connects every server, all at once. */
  /** `only`: the servers to connect now (default: all); the others connect on first use. */
  async startAll(only?: ReadonlySet<string>): Promise<StartResult[]> {
    return Promise.all(
      [...this.servers.values()].filter((server) => !only || only.has(server.name)).map(async (server) => {
        try {
          return { server, session: await this.session(server.name) };
        } catch (err) {
          return { server, error: err as McpConnectError };
        }
      }),
    );
  }

  /** Runs one tool call on the connections: closeWhenIdle waits for it to settle. */
  async use<T>(call: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await call();
    } finally {
      if (--this.running === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** Closes every connection once no call is running on them (connections a hot reload replaced). */
  async closeWhenIdle(): Promise<void> {
    // Checked again on waking, and closed in the same turn: no call starts in between.
    while (this.running > 0 && !this.closing) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    await this.close();
  }

  /** Closes every connection now (the agent shuts down); a call still running on one fails. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(sessions.map(async (s) => (await s).close()));
  }
}
