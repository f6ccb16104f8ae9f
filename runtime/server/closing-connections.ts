/**
 * Connections while a stop is under way (SIGTERM's drain, then the grace period). From the moment
 * it begins, every answer not yet sent says `Connection: close` (node closes its connection once
 * the answer is out), and keep-alive connections waiting idle are closed at once: a client that
 * was told keep-alive sends its next request on a connection about to close under it, a reset it
 * may not try again, where a new connection is served (or, once the load balancer has taken the
 * replica out, goes to another one).
 *
 * The listener is closed only once connections have stopped coming (a lame duck): Linux resets the
 * connections whose handshake it completed but the process had not accepted yet, when the listener
 * closes, and a load balancer slow to see /readyz turn 503 (its probe late, or this process's event
 * loop busy) still opens some after the drain delay. Those are served, each answer saying close; a
 * connection tried after the listener closed is refused, which a client or proxy can try elsewhere.
 */
import type { Server, ServerResponse } from 'node:http';

/**
 * How long no new connection must arrive before the listener closes: a load balancer still sending
 * here, even a few connections a second, keeps it open; short against the drain delay and the grace
 * period. Only a stop with a drain delay waits for it: without one (FORGE_DRAIN_DELAY's default with the
 * file: store outside a cluster, a test's stop) no load balancer was told to stop sending, and the stop
 * takes only the connections already waiting.
 */
export const QUIET_BEFORE_CLOSE_MS = 300;

export class ClosingConnections {
  private closing = false;
  /** Answers not yet finished, whose headers may still say close when the stop begins. */
  private readonly open = new Set<ServerResponse>();
  /** When the last connection was accepted since the stop began (performance.now()). */
  private lastArrival = 0;

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
    // Once the event loop has read what already waits on them: a request sent on one while the loop was busy
    // (node counts it idle until it is read) is answered, saying close, where closing it now resets it.
    afterNextPoll(() => server.closeIdleConnections());
    this.lastArrival = performance.now();
    server.on('connection', () => (this.lastArrival = performance.now()));
  }

  /**
   * Resolves once no connection has arrived for `quietMs` (or at `deadline`), ready for server.close().
   * Each look is taken after the event loop's poll has accepted the connections waiting in the kernel: a
   * timer firing late, after a busy spell, runs before that poll. With `quietMs` 0 (no load balancer was
   * given a drain delay to stop sending) it only takes what already waits.
   */
  async quiet(deadline: number, quietMs = QUIET_BEFORE_CLOSE_MS): Promise<void> {
    for (;;) {
      const seen = this.lastArrival;
      const wait = Math.min(seen + quietMs, deadline) - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref());
      await new Promise<void>((resolve) => afterNextPoll(resolve));
      if (this.lastArrival === seen || performance.now() >= deadline) return;
    }
  }
}

/** Runs `then` after a poll phase of the event loop begun after now (setImmediate alone, called while polling, runs before the next one). */
function afterNextPoll(then: () => void): void {
  setImmediate(() => setImmediate(then));
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
