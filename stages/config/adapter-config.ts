/**
 * forge.yaml's `mcp.servers` and `apis`, after the schema check: defaults
 * applied, durations in milliseconds, spec files made absolute, and the
 * checks a schema cannot make (names used twice, fields of the other
 * transport) as diagnostics at file:line:column.
 */
import { isAbsolute, resolve } from 'node:path';
import { parseDuration, timerDelay } from '../../runtime/duration.ts';
import { error, note, withNotes, type Diagnostic, type Location } from '../../runtime/diagnostics.ts';
import type { ApiAuth, McpServerSettings } from '../../runtime/tools/adapters/settings.ts';
import type { YamlSource } from './yaml-source.ts';

const DEFAULT_TIMEOUT_MS = 30_000;

export interface McpServerConfig extends McpServerSettings {
  at: Location;
}

export interface ApiConfig {
  name: string;
  /** As written in forge.yaml. */
  spec: string;
  /** The spec's absolute path, or its URL. */
  specLocation: string;
  specIsUrl: boolean;
  base_url?: string;
  auth?: ApiAuth;
  include?: string[];
  exclude?: string[];
  timeout_ms: number;
  at: Location;
}

export interface AdapterConfig {
  mcpServers: McpServerConfig[];
  apis: ApiConfig[];
  diagnostics: Diagnostic[];
}

type RawServer = Omit<McpServerSettings, 'timeout_ms' | 'required'> & { timeout?: number | string; required?: boolean };
type RawApi = { name: string; spec: string; base_url?: string; auth?: ApiAuth; include?: string[]; exclude?: string[]; timeout?: number | string };

const STDIO_ONLY = ['command', 'args', 'env', 'cwd'] as const;
const HTTP_ONLY = ['url', 'headers'] as const;

export function resolveAdapterConfig(data: Record<string, unknown>, source: YamlSource, root: string): AdapterConfig {
  const diagnostics: Diagnostic[] = [];
  const rawServers = (data.mcp as { servers?: RawServer[] } | undefined)?.servers ?? [];
  const rawApis = (data.apis as RawApi[] | undefined) ?? [];

  const mcpServers = rawServers.map((raw, i): McpServerConfig => {
    const at = source.locate(['mcp', 'servers', i, 'name']);
    const misplaced = raw.transport === 'http' ? STDIO_ONLY : HTTP_ONLY;
    for (const field of misplaced) {
      if (raw[field] !== undefined) {
        diagnostics.push(error('FORGE_CONFIG_VALUE', `"${field}" of MCP server "${raw.name}" is only used with transport ${raw.transport === 'http' ? 'stdio' : 'http'}`, source.locate(['mcp', 'servers', i, field], 'key'), `remove it, or set transport: ${raw.transport === 'http' ? 'stdio' : 'http'}`));
      }
    }
    const { timeout, required, ...rest } = raw;
    return { ...rest, timeout_ms: durationMs(timeout), required: required ?? true, at };
  });
  reportDuplicates(mcpServers, 'MCP server', diagnostics);

  const apis = rawApis.map((raw, i): ApiConfig => {
    const specIsUrl = /^https?:\/\//i.test(raw.spec);
    const { timeout, ...rest } = raw;
    const auth = raw.auth?.type === 'api_key' ? { ...raw.auth, in: raw.auth.in ?? 'header' } : raw.auth;
    return {
      ...rest,
      ...(auth ? { auth } : {}),
      specLocation: specIsUrl || isAbsolute(raw.spec) ? raw.spec : resolve(root, raw.spec),
      specIsUrl,
      timeout_ms: durationMs(timeout),
      at: source.locate(['apis', i, 'name']),
    };
  });
  reportDuplicates(apis, 'API', diagnostics);
  // Tool names are <namespace>__<tool>: an API and a server of one name would share a namespace.
  for (const api of apis) {
    const server = mcpServers.find((s) => s.name === api.name);
    if (server) {
      diagnostics.push(withNotes(error('FORGE_CONFIG_DUPLICATE', `"${api.name}" names both an MCP server and an API`, api.at, 'their tools would share the prefix; rename one'), note('the MCP server', server.at)));
    }
  }
  return { mcpServers, apis, diagnostics };
}

function reportDuplicates(items: readonly { name: string; at: Location }[], what: string, diagnostics: Diagnostic[]) {
  const seen = new Map<string, Location>();
  for (const item of items) {
    const first = seen.get(item.name);
    if (first) diagnostics.push(withNotes(error('FORGE_CONFIG_DUPLICATE', `${what} "${item.name}" is defined twice`, item.at, 'names must be unique: they prefix the tools\' names'), note('first defined here', first)));
    else seen.set(item.name, item.at);
  }
}

/** "30s", "500ms", "2m", or a number of seconds (the schema checked the form); 30 s when not given. */
function durationMs(value: number | string | undefined): number {
  if (value === undefined) return DEFAULT_TIMEOUT_MS;
  if (typeof value === 'number') return timerDelay(Math.round(value * 1000));
  return parseDuration(value) ?? DEFAULT_TIMEOUT_MS;
}
