/**
 * One LISTEN connection per process for what other replicas announce:
 * cancel requests (`forge_cancel`, the task id) and conversation turns set
 * free (`forge_turn`, the md5 of the conversation id), tools forged
 * (`forge_forged`, the tool's name). A dropped connection
 * is re-opened; waiters also poll, so a missed notification only delays.
 * What was announced while it was down is lost: `onReconnect` listeners
 * look again for themselves once it is back.
 */
import type pg from 'pg';
import type { Logger } from '../tools/model.ts';
import { fromStoredText } from './postgres-text.ts';

export type Channel = 'forge_cancel' | 'forge_turn' | 'forge_forged';
const CHANNELS: Channel[] = ['forge_cancel', 'forge_turn', 'forge_forged'];

export class PostgresNotifications {
  private client: pg.Client | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly listeners = new Map<Channel, Set<(payload: string) => void>>();
  private readonly reconnectListeners = new Set<() => void>();
  /** Whether a connection was ever open: the next one is a reconnect. */
  private wasConnected = false;

  constructor(
    private readonly connect: () => pg.Client,
    private readonly log?: Logger,
    /**
     * How often the open connection is asked to answer, and how long it has to: a store gone silent (a
     * network partition) sends no error and no end, and the connection would wait, deaf, for as long as
     * TCP keeps trying (many minutes).
     */
    private readonly heartbeatMs = 15_000,
  ) {}

  /** Opens the connection; throws if it cannot (the store does not open without it; a reconnect retries). */
  async start(): Promise<void> {
    const client = this.connect();
    client.on('notification', (message) => {
      // A payload is a parameter of pg_notify, written as every parameter is (postgres-text.ts).
      for (const listener of this.listeners.get(message.channel as Channel) ?? []) runSafely(() => listener(fromStoredText(message.payload ?? '')));
    });
    // A client is given up once; its later 'error' and 'end' events change nothing. Before it is
    // connected, a failure is the caller's to handle (one attempt, one retry): counting its events
    // too would start two retries per failure, doubling the attempts every second of an outage.
    let connected = false;
    let givenUp = false;
    const giveUp = () => {
      if (givenUp) return false;
      givenUp = true;
      clearInterval(this.heartbeat);
      void client.end().catch(() => {});
      if (this.client === client) this.client = undefined;
      return true;
    };
    const lost = (why: string) => {
      if (!connected || this.closed || !giveUp()) return;
      this.log?.warn(`state store: the notification connection ${why}; reconnecting`);
      this.retry();
    };
    client.on('error', (err) => lost(`failed (${err.message})`));
    client.on('end', () => lost('closed'));
    try {
      await client.connect();
      for (const channel of CHANNELS) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      giveUp();
      throw err;
    }
    if (this.closed) {
      giveUp();
      return;
    }
    connected = true;
    this.client = client;
    this.heartbeat = setInterval(() => {
      client.query({ text: 'SELECT 1', query_timeout: this.heartbeatMs } as pg.QueryConfig).catch(() => lost(`did not answer within ${this.heartbeatMs} ms`));
    }, this.heartbeatMs);
    this.heartbeat.unref();
    // A listener's failure is its own: it must not make this open connection look failed (a second one would be opened).
    if (this.wasConnected) {
      this.log?.info('state store: the notification connection is back');
      for (const listener of this.reconnectListeners) runSafely(listener);
    }
    this.wasConnected = true;
  }

  on(channel: Channel, listener: (payload: string) => void): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Called each time the connection is back after it was lost (not at the first start); returns the unsubscribe. */
  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.heartbeat);
    await this.client?.end().catch(() => {});
    this.client = undefined;
  }

  private retry(): void {
    if (this.closed) return;
    setTimeout(() => {
      if (this.closed) return;
      this.start().catch(() => this.retry());
    }, 1000).unref();
  }
}

function runSafely(listener: () => void): void {
  try {
    listener();
  } catch {
    // the listener's own business (it logs what it must)
  }
}
