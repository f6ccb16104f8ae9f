import { randomBytes, randomUUID } from 'node:crypto';
import { ok } from '../model.ts';
import { defineBuiltin } from './define.ts';

/**
 * UUIDv7 (RFC 9562): a 48-bit millisecond timestamp, then random bits, so ids
 * sort by creation time.
 */
export function uuidv7(now = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export default defineBuiltin({
  spec: {
    name: 'uuid_generate',
    description: 'Generate UUIDs: version 4 (random) or version 7 (time-ordered, sortable by creation time).',
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      properties: {
        version: { type: 'integer', enum: [4, 7], default: 4, description: 'UUID version: 4 (random) or 7 (time-ordered).' },
        count: { type: 'integer', minimum: 1, maximum: 100, default: 1, description: 'How many UUIDs to generate.' },
      },
      additionalProperties: false,
    },
  },
  create: () => ({
    async execute(args) {
      const { version, count } = args;
      const ids = Array.from({ length: count }, () => (version === 7 ? uuidv7() : randomUUID()));
      return ok(count === 1 ? { uuid: ids[0] } : { uuids: ids });
    },
  }),
});
