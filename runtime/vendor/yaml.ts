/**
 * The YAML parser (YAML tools, skills), prebuilt once per Forge version and
 * spliced into runtime.mjs only for agents that use it (see protocol.ts).
 */
export { parse } from 'yaml';
