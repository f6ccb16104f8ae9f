/**
 * Register: the tool that passed build, test and judge is kept (registered
 * under its tier, written to the store); a refused one is removed again.
 * Also what a restart does with the store: every stored tool registered.
 */
import type { Logger } from '../model.ts';
import type { ToolRegistry } from '../registry.ts';
import type { ForgedRecord, ForgedStore } from './forged-store.ts';
import type { EmergentSettings } from './forge-request.ts';
import { notAllowed } from './emergent-policy.ts';
import { CANDIDATE_OWNER, createForgedTool, isForged, type ForgedTool, type ForgedToolHost } from './forged-tool.ts';

/** Registers a candidate, hidden from every session while its tests run. */
export function registerCandidate(registry: ToolRegistry, tool: ForgedTool): string | undefined {
  tool.forged = { tier: 'session', owner: CANDIDATE_OWNER };
  return registry.register(tool, `forged:${tool.name}`)?.message;
}

export async function discardCandidate(registry: ToolRegistry, tool: ForgedTool): Promise<void> {
  if (registry.get(tool.name) === tool) registry.unregister(tool.name);
  await tool.close?.();
}

export function registerForged(registry: ToolRegistry, store: ForgedStore, tool: ForgedTool, record: ForgedRecord): void {
  store.save(record);
  tool.forged = forgedMark(record);
  registry.toolsChanged();
}

/** The mark of the tool a record describes. */
export function forgedMark(record: ForgedRecord): ForgedTool['forged'] {
  return { tier: record.tier, ...(record.owner ? { owner: record.owner } : {}), forgedAt: record.forgedAt };
}

/**
 * Registers what the store holds (at start, and again each time forge_tool is made: a dev reload); a tool
 * that cannot be made, whose name is taken, that uses a tool `emergent.allow_tools` no longer allows, or
 * past `max_tools` is skipped with a warning. A tool already registered from this very record (a dev
 * reload) is left as it is — unless the settings no longer allow it: it is then no longer served.
 */
export function restoreForged(registry: ToolRegistry, store: ForgedStore, host: (name: string) => ForgedToolHost, settings: EmergentSettings, log: Logger): number {
  let restored = 0;
  const records = store.list((name, err) => log.warn(`forged tool ${name} cannot be read: ${err.message}`));
  // Oldest first: past max_tools, the newest forges are the ones left out.
  records.sort((a, b) => (a.forgedAt < b.forgedAt ? -1 : a.forgedAt > b.forgedAt ? 1 : 0));
  for (const record of records) {
    const { name } = record.request;
    const refusal = notAllowed(record.request, settings);
    const existing = registry.get(name);
    // This very forge, registered before forge_tool was made again (a dev reload): it stays, unless the settings now refuse it.
    if (isForged(existing) && existing.forged.forgedAt === record.forgedAt && existing.forged.owner !== CANDIDATE_OWNER) {
      if (refusal) {
        registry.unregister(name);
        void registry.retire(existing).catch(() => {});
        log.warn(`forged tool ${name} is no longer served: ${refusal}`);
      }
      continue;
    }
    if (existing) {
      log.warn(`forged tool ${name} is not registered: another tool has its name`);
      continue;
    }
    if (refusal) {
      log.warn(`forged tool ${name} is not registered: ${refusal}`);
      continue;
    }
    const full = roomProblem(registry, settings);
    if (full) {
      log.warn(`forged tool ${name} is not registered: ${full}`);
      continue;
    }
    try {
      const tool = createForgedTool(record.request, forgedMark(record), host(name));
      if (!registry.register(tool, `forged:${name}`)) restored++;
    } catch (err) {
      log.warn(`forged tool ${name} is not registered: ${(err as Error).message}`);
    }
  }
  return restored;
}

/** Why one more forged tool would pass `max_tools` for the agent (undefined: there is room). */
export function roomProblem(registry: ToolRegistry, settings: EmergentSettings): string | undefined {
  const count = forgedTools(registry).length;
  return count >= settings.max_tools ? `the agent already has ${count} forged tools; the limit is ${settings.max_tools} (emergent.max_tools)` : undefined;
}

/** The forged tools `registry` serves, what max_tools counts: a candidate under test is not one yet. */
export function forgedTools(registry: ToolRegistry): ForgedTool[] {
  return registry.list().filter(isForged).filter((t) => t.forged.owner !== CANDIDATE_OWNER);
}
