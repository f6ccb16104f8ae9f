/**
 * Every tool shipped with Forge, by the name forge.yaml enables it with.
 * This list only says where each tool's module is; what the tool is
 * (category, tags, schema) is declared by the module itself.
 *
 * The build imports just the enabled modules into runtime.mjs (by `module`),
 * so a tool that is not enabled — a dev tool in a --prod build — is never in
 * the bundle. The CLI loads them through `load`.
 */
import type { BuiltinDefinition } from './builtin/define.ts';

export interface CatalogEntry {
  name: string;
  /** Path relative to runtime/tools/. */
  module: string;
  load(): Promise<{ default: BuiltinDefinition<any> }>;
}

export const CATALOG: readonly CatalogEntry[] = [
  { name: 'uuid_generate', module: 'builtin/uuid-generate.ts', load: () => import('./builtin/uuid-generate.ts') },
  { name: 'webhook_call', module: 'builtin/webhook-call.ts', load: () => import('./builtin/webhook-call.ts') },
];

/** Names that enable several tools at once. */
export const GROUPS: Readonly<Record<string, readonly string[]>> = {};

export function findCatalogEntry(name: string): CatalogEntry | undefined {
  return CATALOG.find((entry) => entry.name === name);
}
