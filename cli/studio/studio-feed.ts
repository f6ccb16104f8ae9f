/**
 * What the studio page watches live: every finished span (the timeline),
 * and the tool list changing (hot reload, forged tools). Spans are kept in
 * a short ring so a page opened after a turn still sees its trace.
 */
import type { ServerResponse } from 'node:http';
import { addSpanProcessor, type FinishedSpan } from '../../runtime/telemetry/tracer.ts';
import type { ToolRegistry } from '../../runtime/tools/registry.ts';

const KEPT_SPANS = 500;

export interface StudioFeed {
  /** Streams the feed to a page as server-sent events until it goes away. */
  subscribe(res: ServerResponse): void;
  close(): void;
}

export function createStudioFeed(registry: ToolRegistry): StudioFeed {
  const recent: FinishedSpan[] = [];
  const clients = new Set<ServerResponse>();
  const send = (res: ServerResponse, event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const broadcast = (event: string, data: unknown) => {
    for (const res of clients) send(res, event, data);
  };

  const removeProcessor = addSpanProcessor((span) => {
    recent.push(span);
    if (recent.length > KEPT_SPANS) recent.shift();
    broadcast('span', span);
  });
  // The registry tells once per batch of changes (a reload of several files).
  const stopWatching = registry.onToolsChanged(() => broadcast('tools', { count: registry.list().length }));
  const keepAlive = setInterval(() => {
    for (const res of clients) res.write(': keep-alive\n\n');
  }, 15_000);
  keepAlive.unref();

  return {
    subscribe(res) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      send(res, 'hello', { spans: recent });
      clients.add(res);
      res.on('close', () => clients.delete(res));
    },
    close() {
      removeProcessor();
      stopWatching();
      clearInterval(keepAlive);
      for (const res of clients) res.end();
      clients.clear();
    },
  };
}
