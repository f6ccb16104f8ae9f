/**
 * Register: the tool that passed build, test and judge is kept (registered
 * under its tier, written to the store); a refused one is removed again.
 * Also what a restart does with the store: every stored tool registered.
 */
import type { Logger } from '../model.ts';
import type { ToolRegistry } from '../registry.ts';
import type { ForgedRecord, ForgedStore } from './forged-store.ts';
import { createForgedTool, type ForgedTool, type ForgedToolHost } from './forged-tool.ts';

/** Registers a candidate, hidden from every session while its tests run. */
export function registerCandidate(registry: ToolRegistry, tool: ForgedTool): string | undefined {
  tool.forged = { tier: 'session', owner: '\0candidate' };
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

/** Registers what the store holds (at start); a tool that cannot be made, or whose name is taken, is skipped with a warning. */
export function restoreForged(registry: ToolRegistry, store: ForgedStore, host: (name: string) => ForgedToolHost, log: Logger): number {
  let restored = 0;
  for (const record of store.list((name, err) => log.warn(`forged tool ${name} cannot be read: ${err.message}`))) {
    const { name } = record.request;
    if (registry.has(name)) {
      log.warn(`forged tool ${name} is not registered: another tool has its name`);
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
