/**
 * Every tool shipped with Forge, by the name forge.yaml enables it with.
 * This list only says where each tool's module is; what the tool is
 * (category, tags, schema) is declared by the module itself.
 *
 * The build imports just the enabled modules into the runtime core (by `module`),
 * so a tool that is not enabled — a dev tool in a --prod build — is never in
 * the bundle. The CLI loads them through `load`.
 */
import type { BuiltinDefinition } from './builtin/define.ts';
import { ownValue } from '../own-value.ts';

export interface CatalogEntry {
  name: string;
  /** Path relative to runtime/tools/. */
  module: string;
  load(): Promise<{ default: BuiltinDefinition<any> }>;
}

export const CATALOG: readonly CatalogEntry[] = [
  { name: 'uuid_generate', module: 'builtin/uuid-generate.ts', load: () => import('./builtin/uuid-generate.ts') },
  { name: 'http_request', module: 'builtin/http-request.ts', load: () => import('./builtin/http-request.ts') },
  { name: 'web_fetch', module: 'builtin/web-fetch.ts', load: () => import('./builtin/web-fetch.ts') },
  { name: 'web_search', module: 'builtin/web-search.ts', load: () => import('./builtin/web-search.ts') },
  { name: 'json_parse', module: 'builtin/json-parse.ts', load: () => import('./builtin/json-parse.ts') },
  { name: 'csv_parse', module: 'builtin/csv-parse.ts', load: () => import('./builtin/csv-parse.ts') },
  { name: 'datetime_now', module: 'builtin/datetime-now.ts', load: () => import('./builtin/datetime-now.ts') },
  { name: 'math_calculate', module: 'builtin/math-calculate.ts', load: () => import('./builtin/math-calculate.ts') },
  { name: 'file_create', module: 'builtin/file-create.ts', load: () => import('./builtin/file-create.ts') },
  { name: 'read_skill', module: 'builtin/read-skill.ts', load: () => import('./builtin/read-skill.ts') },
  { name: 'memory_search', module: 'builtin/memory-search.ts', load: () => import('./builtin/memory-search.ts') },
  { name: 'memory_get', module: 'builtin/memory-get.ts', load: () => import('./builtin/memory-get.ts') },
  { name: 'schedule_set', module: 'builtin/schedule-set.ts', load: () => import('./builtin/schedule-set.ts') },
  { name: 'schedule_list', module: 'builtin/schedule-list.ts', load: () => import('./builtin/schedule-list.ts') },
  { name: 'schedule_delete', module: 'builtin/schedule-delete.ts', load: () => import('./builtin/schedule-delete.ts') },
  { name: 'schedule_history', module: 'builtin/schedule-history.ts', load: () => import('./builtin/schedule-history.ts') },
  { name: 'cli_execute', module: 'builtin/cli-execute.ts', load: () => import('./builtin/cli-execute.ts') },
  { name: 'file_read', module: 'code-agent/file-read.ts', load: () => import('./code-agent/file-read.ts') },
  { name: 'file_write', module: 'code-agent/file-write.ts', load: () => import('./code-agent/file-write.ts') },
  { name: 'file_edit', module: 'code-agent/file-edit.ts', load: () => import('./code-agent/file-edit.ts') },
  { name: 'file_patch', module: 'code-agent/file-patch.ts', load: () => import('./code-agent/file-patch.ts') },
  { name: 'atomic_edit', module: 'code-agent/atomic-edit.ts', load: () => import('./code-agent/atomic-edit.ts') },
  { name: 'glob_search', module: 'code-agent/glob-search.ts', load: () => import('./code-agent/glob-search.ts') },
  { name: 'grep_search', module: 'code-agent/grep-search.ts', load: () => import('./code-agent/grep-search.ts') },
  { name: 'directory_tree', module: 'code-agent/directory-tree.ts', load: () => import('./code-agent/directory-tree.ts') },
  { name: 'local_shell', module: 'dev/local-shell.ts', load: () => import('./dev/local-shell.ts') },
  { name: 'local_file_browser', module: 'dev/local-file-browser.ts', load: () => import('./dev/local-file-browser.ts') },
  { name: 'debug_console', module: 'dev/debug-console.ts', load: () => import('./dev/debug-console.ts') },
  { name: 'test_runner', module: 'dev/test-runner.ts', load: () => import('./dev/test-runner.ts') },
  { name: 'forge_tool', module: 'emergent/forge-tool.ts', load: () => import('./emergent/forge-tool.ts') },
  { name: 'webhook_call', module: 'builtin/webhook-call.ts', load: () => import('./builtin/webhook-call.ts') },
];

const CODE_AGENT_READ = ['file_read', 'glob_search', 'grep_search', 'directory_tree'];
// file_read is in the write group too: atomic_edit reads through it, and editing needs reading.
const CODE_AGENT_WRITE = ['file_read', 'file_write', 'file_edit', 'file_patch', 'atomic_edit'];

/** Names that enable several tools at once. */
export const GROUPS: Readonly<Record<string, readonly string[]>> = {
  code_agent_read: CODE_AGENT_READ,
  code_agent_write: CODE_AGENT_WRITE,
  code_agent: [...new Set([...CODE_AGENT_READ, ...CODE_AGENT_WRITE])],
  memory: ['memory_search', 'memory_get'],
  scheduling: ['schedule_set', 'schedule_list', 'schedule_delete', 'schedule_history'],
};

/** The tools a group name enables, if `name` is one (not a property every object has, such as `constructor`). */
export function toolGroup(name: string): readonly string[] | undefined {
  return ownValue(GROUPS, name);
}

export function findCatalogEntry(name: string): CatalogEntry | undefined {
  return CATALOG.find((entry) => entry.name === name);
}
