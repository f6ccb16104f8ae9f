/**
 * The operations of forge.yaml's APIs, as adapter tools. A spec file is
 * always read (it is part of the project); a spec on the web is fetched by
 * a live build, and an offline one uses what the last build recorded.
 * include/exclude globs choose operations by operationId.
 */
import { error, formatLocation, warning, type Diagnostic } from '../../runtime/diagnostics.ts';
import type { HttpClient } from '../../runtime/net/http-client.ts';
import type { ApiSettings, OpenApiBinding } from '../../runtime/tools/adapters/settings.ts';
import type { ToolSpec } from '../../runtime/tools/model.ts';
import type { ApiConfig } from '../config/adapter-config.ts';
import type { ProjectTool } from '../project-tool.ts';
import type { DiscoveryMode } from './discover-mcp.ts';
import { createNameFilter } from '../../runtime/tools/adapters/name-filter.ts';
import { loadOpenApiDocument } from './openapi-document.ts';
import { documentBaseUrl, listOperations } from './openapi-operations.ts';
import { operationToolSpec } from './openapi-tool-spec.ts';
import { API_TOOL_SOURCE, sameToolSource, type RecordedAdapters } from './recorded-manifest.ts';
import { closestMatch } from '../../runtime/suggest.ts';

export interface OpenApiDiscovery {
  tools: ProjectTool[];
  apis: ApiSettings[];
  diagnostics: Diagnostic[];
  /** Spec files read, for the build cache. */
  files: string[];
  /** Specs fetched from the web (so a cached build cannot stand for this one). */
  fetched: string[];
}

export async function discoverOpenApiTools(apis: readonly ApiConfig[], mode: DiscoveryMode, recorded: RecordedAdapters | undefined, http: HttpClient): Promise<OpenApiDiscovery> {
  const results = await Promise.all(apis.map((api) => discoverApi(api, mode, recorded, http)));
  return {
    tools: results.flatMap((r) => r.tools),
    apis: results.flatMap((r) => (r.settings ? [r.settings] : [])),
    diagnostics: results.flatMap((r) => r.diagnostics),
    files: results.flatMap((r) => r.files),
    fetched: results.filter((r) => r.fetched).map((r) => r.name),
  };
}

async function discoverApi(api: ApiConfig, mode: DiscoveryMode, recorded: RecordedAdapters | undefined, http: HttpClient) {
  const diagnostics: Diagnostic[] = [];
  const filter = createNameFilter(api.include, api.exclude);
  const origin = `${formatLocation(api.at)} (API "${api.name}")`;
  const toTools = (specs: ToolSpec[]): ProjectTool[] => specs.map((spec) => ({ spec, origin, at: api.at, schemaOrigin: 'external' }));
  const settingsWith = (baseUrl: string): ApiSettings => ({
    name: api.name,
    spec: api.spec,
    base_url: baseUrl,
    ...(api.auth ? { auth: api.auth } : {}),
    timeout_ms: api.timeout_ms,
    ...(api.include ? { include: api.include } : {}),
    ...(api.exclude ? { exclude: api.exclude } : {}),
  });
  const result = (tools: ProjectTool[], settings: ApiSettings | undefined, files: string[] = [], fetched = false) => ({ name: api.name, tools, settings, diagnostics, files, fetched });

  const previous = recorded?.apiTools(api.name);
  const previousSettings = recorded?.api(api.name);
  // Recorded from another spec, or chosen by other include/exclude globs, the list is not today's: read the spec again.
  const current = previousSettings !== undefined && sameToolSource(previousSettings, api, API_TOOL_SOURCE);
  if (api.specIsUrl && (mode === 'offline' || (mode === 'recorded-or-live' && previous && current))) {
    if (previous && previousSettings) {
      const specs = previous.filter((s) => filter.allows((s.adapter as OpenApiBinding).operationId)).map((s) => ({ ...s, timeoutMs: api.timeout_ms }));
      return result(toTools(specs), settingsWith(api.base_url ?? previousSettings.base_url));
    }
    diagnostics.push(error('FORGE_API_OFFLINE', `no recorded operations for API "${api.name}" (its spec is on the web)`, api.at, 'build once without --offline so its operations are recorded in agent.json'));
    return result([], undefined);
  }

  let loaded;
  try {
    loaded = await loadOpenApiDocument(api.specLocation, http);
  } catch (err) {
    diagnostics.push(error('FORGE_API_SPEC', `cannot read the OpenAPI document of API "${api.name}" (${api.spec}): ${firstLine((err as Error).message)}`, api.at, api.specIsUrl ? 'check the URL, or build with --offline to use the last recorded operations' : 'check the path (it is relative to forge.yaml) and that the file is OpenAPI 3.x or Swagger 2.0'));
    return result([], undefined);
  }
  const baseUrl = api.base_url ?? documentBaseUrl(loaded.doc, api.specIsUrl ? api.specLocation : undefined);
  if (!baseUrl) {
    diagnostics.push(error('FORGE_API_BASE_URL', `the OpenAPI document of API "${api.name}" names no server`, api.at, 'set base_url for it in forge.yaml'));
    return result([], undefined, loaded.files, api.specIsUrl);
  }

  const operations = listOperations(loaded.doc);
  const ids = operations.map((o) => o.id);
  for (const pattern of filter.unused(ids)) {
    diagnostics.push(warning('FORGE_API_FILTER', `include pattern "${pattern}" matches no operation of API "${api.name}"`, api.at, `its operations: ${ids.join(', ')}`));
  }
  // A misspelt exclude leaves the operation it meant in.
  for (const pattern of filter.unusedDeny(ids)) {
    const meant = closestMatch(pattern, ids);
    diagnostics.push(warning('FORGE_API_FILTER', `exclude pattern "${pattern}" matches no operation of API "${api.name}"${meant ? `, so "${meant}" is not left out` : ''}`, api.at, meant ? `did you mean "${meant}"?` : `its operations: ${ids.join(', ')}`));
  }
  const specs: ToolSpec[] = [];
  const seen = new Set<string>();
  for (const op of operations) {
    if (!filter.allows(op.id)) continue;
    if (op.unsupported) {
      diagnostics.push(warning('FORGE_API_OPERATION', `operation "${op.id}" of API "${api.name}" is left out: ${op.unsupported}`, api.at, `exclude it to silence this: exclude: [${op.id}]`));
      continue;
    }
    const spec = operationToolSpec(api.name, op, api.timeout_ms, loaded.doc);
    if (seen.has(spec.name)) {
      diagnostics.push(error('FORGE_TOOL_COLLISION', `two operations of API "${api.name}" become the tool "${spec.name}"`, api.at, 'exclude one of them'));
      continue;
    }
    seen.add(spec.name);
    specs.push(spec);
  }
  return result(toTools(specs), settingsWith(baseUrl), loaded.files, api.specIsUrl);
}

function firstLine(text: string): string {
  return text.split('\n')[0];
}
