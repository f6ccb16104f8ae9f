/**
 * Connections while a stop is under way (SIGTERM's drain, then the grace period). From the moment
 * it begins, every answer not yet sent says `Connection: close` (node closes its connection once
 * the answer is out), and keep-alive connections waiting idle are closed at once: a client that
 * was told keep-alive sends its next request on a connection about to close under it, a reset it
 * may not try again, where a new connection is served (or, once the load balancer has taken the
 * replica out, goes to another one).
 */
import type { Server, ServerResponse } from 'node:http';

export class ClosingConnections {
  private closing = false;
  /** Answers not yet finished, whose headers may still say close when the stop begins. */
  private readonly open = new Set<ServerResponse>();

  /** Called with every request's response as it comes in; `forget` once it has closed. */
  track(res: ServerResponse): void {
    if (this.closing) return sayClose(res);
    this.open.add(res);
  }

  forget(res: ServerResponse): void {
    this.open.delete(res);
  }

  /** The stop begins: no connection is kept alive from now on. */
  begin(server: Server): void {
    if (this.closing) return;
    this.closing = true;
    for (const res of this.open) if (!res.headersSent) sayClose(res);
    this.open.clear();
    server.closeIdleConnections();
  }
}

/**
 * `Connection: close`, kept so: a route whose writeHead names keep-alive itself (the MCP SDK's event
 * streams) sets its headers through setHeader once one is set already, and would put keep-alive back.
 */
function sayClose(res: ServerResponse): void {
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name, value) => setHeader(name, name.toLowerCase() === 'connection' ? 'close' : value);
  res.setHeader('connection', 'close');
}
