/**
 * agent.json as every bundle command reads it. The build writes it, but the
 * bundle runs it as it finds it: one edited by hand (started with
 * FORGE_VERIFY=off, or by commands that verify nothing, as `tools` and
 * `call`) or damaged in a copy is reported at its line with
 * FORGE_AGENT_JSON, as forge.yaml's mistakes are, instead of failing
 * somewhere inside the runtime as an internal error. Only what every
 * command relies on is checked here (an object whose tools are a list of
 * named tools); its approval section has its own check
 * (manifest-approval-check.ts).
 */
import { error, type Diagnostic, type Location } from './diagnostics.ts';
import type { AgentManifest } from './manifest.ts';
import { textPosition } from './text-position.ts';
import { findJsonSyntaxError } from './json-syntax.ts';

const HINT = 'run forge build to write agent.json again, or fix it by hand';

/** `file`: agent.json as it is shown (relative to where the command runs, when below it). */
export function readManifest(text: string, file: string): { manifest: AgentManifest } | { problem: Diagnostic } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // Where and why from the same reader json_parse uses (V8's message says where only sometimes, and differs by Node line).
    const found = findJsonSyntaxError(text);
    const at = found ? { file, ...textPosition(text, found.offset) } : { file };
    return { problem: error('FORGE_AGENT_JSON', `agent.json is not JSON: ${found?.problem ?? (err as Error).message}`, at, HINT) };
  }
  const shape = shapeProblem(parsed);
  if (shape) return { problem: error('FORGE_AGENT_JSON', `agent.json ${shape.message}`, locateInJson(file, text, shape.at), HINT) };
  return { manifest: parsed as AgentManifest };
}

/** What makes a parsed agent.json one no command can read, and the keys that lead to it. */
function shapeProblem(parsed: unknown): { message: string; at: string[] } | undefined {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { message: 'is not an object', at: [] };
  const tools = (parsed as Record<string, unknown>).tools;
  if (!Array.isArray(tools)) return { message: `has ${tools === undefined ? 'no "tools" list' : '"tools" that is not a list of tools'}`, at: tools === undefined ? [] : ['tools'] };
  for (const [i, tool] of tools.entries()) {
    if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) return { message: `tools[${i}] is not a tool (an object with a name)`, at: ['tools'] };
    const { name } = tool as Record<string, unknown>;
    if (typeof name !== 'string' || !name) return { message: `tools[${i}] has no name`, at: ['tools'] };
  }
  return undefined;
}

/**
 * Where the last of `path` is in agent.json's text: each key (`"approval":`) or quoted value found after the
 * one before it. Right for the file the build writes (one rule a line); a place near enough otherwise.
 */
export function locateInJson(file: string, text: string, path: readonly string[]): Location {
  let offset = 0;
  for (const [i, step] of path.entries()) {
    const needle = step.startsWith('"') ? step : `"${step}"`;
    const found = text.indexOf(needle, offset);
    if (found < 0) break;
    offset = i === path.length - 1 ? found : found + needle.length;
  }
  return { file, ...textPosition(text, offset) };
}
