/**
 * An MCP tool result as a Forge tool result. Models read text, so content is
 * flattened to text: text parts as they are, images and audio as a marker
 * with their type and size, embedded text resources with their URI, binary
 * ones and resource links as markers. Structured content, when the server
 * sends it, is the value. An `isError` result is a tool error.
 */
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { fail, ok, type ToolResult } from '../../model.ts';
import { cap, MAX_RESULT_CHARS } from '../text-cap.ts';

export function flattenCallResult(result: CallToolResult, toolName: string, maxChars = MAX_RESULT_CHARS): ToolResult {
  const text = (result.content ?? []).map(describeContent).join('\n');
  if (result.isError) {
    const message = text.trim() || 'the server reported an error without a message';
    return fail('FORGE_MCP_TOOL_ERROR', `${toolName}: ${cap(message, 2_000)}`, undefined, message.length > 2_000 ? cap(message, maxChars) : undefined);
  }
  if (result.structuredContent !== undefined && JSON.stringify(result.structuredContent).length <= maxChars) {
    return ok(result.structuredContent);
  }
  return ok(cap(text, maxChars));
}

function describeContent(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${formatBytes(base64Size(block.data))}]`;
    case 'resource': {
      const { resource } = block;
      const mime = resource.mimeType ? `, ${resource.mimeType}` : '';
      if ('text' in resource && typeof resource.text === 'string') return `[resource ${resource.uri}${mime}]\n${resource.text}`;
      const size = 'blob' in resource && typeof resource.blob === 'string' ? `, ${formatBytes(base64Size(resource.blob))}` : '';
      return `[resource ${resource.uri}${mime}${size}: binary, not shown]`;
    }
    case 'resource_link':
      return `[resource link: ${block.name} <${block.uri}>${block.mimeType ? ` ${block.mimeType}` : ''}]`;
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

function base64Size(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

function formatBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}
