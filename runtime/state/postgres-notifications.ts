/**
 * One LISTEN connection per process for what other replicas announce:
 * cancel requests (`forge_cancel`, the task id) and conversation turns set
 * free (`forge_turn`, the md5 of the conversation id). A dropped connection
 * is re-opened; waiters also poll, so a missed notification only delays.
 */
import type pg from 'pg';
import type { Logger } from '../tools/model.ts';

export type Channel = 'forge_cancel' | 'forge_turn';
const CHANNELS: Channel[] = ['forge_cancel', 'forge_turn'];

export class PostgresNotifications {
  private client: pg.Client | undefined;
  private closed = false;
  private readonly listeners = new Map<Channel, Set<(payload: string) => void>>();

  constructor(
    private readonly connect: () => pg.Client,
    private readonly log?: Logger,
  ) {}

  async start(): Promise<void> {
    const client = this.connect();
    client.on('notification', (message) => {
      for (const listener of this.listeners.get(message.channel as Channel) ?? []) listener(message.payload ?? '');
    });
    let lost = false;
    const reconnect = (why: string) => {
      if (lost || this.closed) return;
      lost = true;
      this.log?.warn(`state store: the notification connection ${why}; reconnecting`);
      void client.end().catch(() => {});
      this.client = undefined;
      this.retry();
    };
    client.on('error', (err) => reconnect(`failed (${err.message})`));
    client.on('end', () => reconnect('closed'));
    await client.connect();
    for (const channel of CHANNELS) await client.query(`LISTEN ${channel}`);
    this.client = client;
  }

  on(channel: Channel, listener: (payload: string) => void): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
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
