import { describe, expect, it } from 'vitest';
import { flattenCallResult } from '../../../../runtime/tools/adapters/mcp/flatten-result.ts';

const png = Buffer.alloc(3000, 1).toString('base64');

describe('flattenCallResult', () => {
  it.each([
    ['text parts, joined by lines', [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }], 'one\ntwo'],
    ['an image, as a marker with type and size', [{ type: 'image', data: png, mimeType: 'image/png' }], '[image: image/png, 2.9 KB]'],
    ['audio, as a marker', [{ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }], '[audio: audio/wav, 3 B]'],
    ['an embedded text resource, with its URI', [{ type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'body' } }], '[resource file:///a.txt, text/plain]\nbody'],
    ['an embedded binary resource, as a marker', [{ type: 'resource', resource: { uri: 'file:///a.bin', blob: 'AAAA' } }], '[resource file:///a.bin, 3 B: binary, not shown]'],
    ['a resource link', [{ type: 'resource_link', uri: 'file:///b', name: 'b', mimeType: 'text/csv' }], '[resource link: b <file:///b> text/csv]'],
  ])('flattens %s', (_what, content, expected) => {
    expect(flattenCallResult({ content } as never, 'srv__tool')).toEqual({ ok: true, value: expected });
  });

  it('gives structured content as the value', () => {
    expect(flattenCallResult({ content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } }, 'srv__tool')).toEqual({ ok: true, value: { a: 1 } });
  });

  it('caps long text and says how much was cut', () => {
    const result = flattenCallResult({ content: [{ type: 'text', text: 'x'.repeat(150) }] }, 'srv__tool', 100);
    expect(result).toEqual({ ok: true, value: `${'x'.repeat(100)}\n[... truncated: 50 more characters]` });
  });

  it('turns an error result into a tool error naming the tool', () => {
    expect(flattenCallResult({ isError: true, content: [{ type: 'text', text: 'file not found' }] }, 'fs__read_file')).toEqual({ ok: false, error: { code: 'FORGE_MCP_TOOL_ERROR', message: 'fs__read_file: file not found' } });
    expect(flattenCallResult({ isError: true, content: [] }, 'fs__read_file')).toMatchObject({ ok: false, error: { message: 'fs__read_file: the server reported an error without a message' } });
  });
});
