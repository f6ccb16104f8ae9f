/**
 * The MCP protocol versions of the SDK Forge ships (mcp.ts), written here as
 * values: stateless MCP (mcp-direct.ts) answers with them without evaluating
 * the SDK, whose message schemas take about 50 ms to build, in a bundle and
 * in `forge run` alike. A test holds them equal to the SDK's own
 * (test/runtime/vendor/mcp-versions.test.ts): an SDK upgrade that changes
 * them fails it until they are written anew.
 */
export const LATEST_PROTOCOL_VERSION = '2025-11-25';
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];
