/**
 * forge.yaml's `emergent:` as it is now, applied to tools already forged,
 * not only to new forges: a tool restored from `.forge/forged/` or synced
 * from the state store is registered only if `allow_tools` still allows
 * what it composes or calls (and `max_tools` has room), and every call is
 * checked against the settings in force at that moment — under
 * `forge run --dev` a saved forge.yaml makes a new forge_tool, which puts
 * its settings in force for the tools the old one registered.
 */
import type { ToolRegistry } from '../registry.ts';
import type { EmergentSettings, ForgeRequest } from './forge-request.ts';
import { readAllowlist } from './forged-tool.ts';

const inForce = new WeakMap<ToolRegistry, EmergentSettings>();

/** The settings forged tools of `registry` are held to from now on (forge_tool's, each time one is made). */
export function putInForce(registry: ToolRegistry, settings: EmergentSettings): void {
  inForce.set(registry, settings);
}

export function settingsInForce(registry: ToolRegistry, fallback: EmergentSettings): EmergentSettings {
  return inForce.get(registry) ?? fallback;
}

/** The tools a forged tool composes (compose steps) or may call (`tool:NAME` in its allowlist). */
function toolsUsed(request: ForgeRequest): string[] {
  const impl = request.implementation;
  const names = impl.mode === 'compose' ? impl.steps.map((s) => s.tool) : readAllowlist(impl.allowlist).tools;
  return [...new Set(names)];
}

/** Whether `allow_tools` lets a forged tool use `tool` (empty: any tool). */
export function toolAllowed(tool: string, settings: EmergentSettings): boolean {
  return !settings.allow_tools.length || settings.allow_tools.includes(tool);
}

/** Why the settings no longer let a forged tool run ("it uses ..."), undefined when they do. */
export function notAllowed(request: ForgeRequest, settings: EmergentSettings): string | undefined {
  // Empty allows any tool: nothing to work out (this runs at every call of a forged tool).
  if (!settings.allow_tools.length) return undefined;
  const refused = toolsUsed(request).filter((tool) => !toolAllowed(tool, settings));
  if (!refused.length) return undefined;
  return `it uses ${refused.map((t) => `"${t}"`).join(', ')}, which emergent.allow_tools (${settings.allow_tools.join(', ')}) does not allow`;
}

export const NOT_ALLOWED_HINT = 'add the tool to emergent.allow_tools in forge.yaml, or remove the forged tool with `forge tool forged remove NAME`';
