/** Server-sent events from an HTTP stream (both providers stream this way). */
import type { EventSourceMessage } from 'eventsource-parser';
import { createParser } from '../../vendor/libs.ts';
import type { HttpStream } from '../../net/http-client.ts';

export async function* readEvents(stream: HttpStream): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => queue.push(event) });
  const decoder = new TextDecoder();
  for await (const chunk of stream.body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length) yield queue.shift()!;
  }
  parser.feed(decoder.decode());
  while (queue.length) yield queue.shift()!;
}
