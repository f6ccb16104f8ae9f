/**
 * runtime/vendor/mcp-versions.ts writes the MCP SDK's protocol versions as
 * values (so stateless MCP answers without evaluating the SDK): they must be
 * the versions of the SDK Forge ships, or Forge would accept a version its
 * SDK does not speak, or refuse one it does.
 */
import { LATEST_PROTOCOL_VERSION as sdkLatest, SUPPORTED_PROTOCOL_VERSIONS as sdkSupported } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../../../runtime/vendor/mcp-versions.ts';

describe('the MCP protocol versions stateless MCP answers with', () => {
  it("are the shipped SDK's, in its order", () => {
    expect(LATEST_PROTOCOL_VERSION).toBe(sdkLatest);
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(sdkSupported);
  });
});
