/**
 * The YAML parser (YAML tools, skills), prebuilt once per Forge version and
 * copied into a bundle's vendor/ only for agents that use it (see mcp.ts).
 */
export { isScalar, LineCounter, parse, parseDocument } from 'yaml';
