/**
 * A forged tool as a Tool: a composition (run by the YAML meta-tool
 * engine) or sandboxed code (run by its warm sandbox process). Both carry
 * `forged`, which says who may see them (session-view.ts).
 */
import type { HttpClient } from '../../net/http-client.ts';
import { fail, ok, type ToolContext, type ToolResult } from '../model.ts';
import { createYamlTool, yamlToolSpec } from '../yaml/yaml-tool.ts';
import { COMPOSITION_TAGS, composeDefinition } from './compose-definition.ts';
import { outputProblem } from './output-contract.ts';
import type { EmergentSettings, ForgeRequest } from './forge-request.ts';
import { NOT_ALLOWED_HINT, notAllowed, toolAllowed } from './emergent-policy.ts';
import type { ForgedMark, ForgedTool } from './forged-mark.ts';
import { SandboxProcess, type BridgeHandler, type SandboxAllow, type SandboxLimits } from './sandbox-process.ts';
import { MAX_RESULT_CHARS } from './sandbox-worker.ts';
import { requestRef } from './schema-refs.ts';

export { isForged, type ForgedMark, type ForgedTool } from './forged-mark.ts';

/**
 * The most characters of values a forged composition's call may pass into its steps and output: four
 * times what a sandboxed tool may return (MAX_RESULT_CHARS), room for a page passed through a few steps.
 */
export const MAX_COMPOSED_CHARS = 4 * MAX_RESULT_CHARS;

/** The owner of a tool forge_tool is still testing: registered so its tests can call it, served to no one. */
export const CANDIDATE_OWNER = '\0candidate';

export interface ForgedToolHost {
  workDir: string;
  http: HttpClient;
  limits: SandboxLimits;
  /** The file a sandboxed tool's code is in (its sandbox may read it and nothing else). */
  codeFile: string;
  /** forge.yaml's `emergent:` in force now (a dev reload may have narrowed it since the tool was made): checked at every call. */
  settings: () => EmergentSettings;
}

/** What an allowlist grants: `tool:NAME` and `fetch:HOST`. */
export function readAllowlist(allowlist: readonly string[] = []): SandboxAllow {
  const allow: SandboxAllow = { tools: [], hosts: [] };
  for (const entry of allowlist) {
    const [kind, value] = [entry.slice(0, entry.indexOf(':')), entry.slice(entry.indexOf(':') + 1)];
    if (kind === 'tool') allow.tools.push(value);
    if (kind === 'fetch') allow.hosts.push(value.toLowerCase());
  }
  return allow;
}

export function createForgedTool(request: ForgeRequest, mark: ForgedMark, host: ForgedToolHost): ForgedTool {
  // Refused at build since; one kept from before (.forge/forged/, the shared store) is not made.
  const ref = requestRef(request);
  if (ref) throw new Error(`${ref} uses $ref, which forge_tool refuses: schemas that reuse each other make checking an argument take exponential time`);
  const tool = createUncheckedTool(request, mark, host);
  const run = tool.execute;
  // Every result honours outputSchema, whichever front end asked.
  tool.execute = async (args, ctx) => {
    // allow_tools as it is now: a tool forged under a wider one is refused what it no longer allows.
    const refusal = notAllowed(request, host.settings());
    if (refusal) return fail('FORGE_FORGE_NOT_ALLOWED', `tool "${request.name}" is not run: ${refusal}`, NOT_ALLOWED_HINT);
    const result = await run(args, ctx);
    if (!result.ok) return result;
    const problem = outputProblem(request.outputSchema, result.value);
    return problem ? fail('FORGE_TOOL_OUTPUT', `tool "${request.name}": ${problem}`, undefined, JSON.stringify(result.value).slice(0, 2000)) : result;
  };
  return tool;
}

function createUncheckedTool(request: ForgeRequest, mark: ForgedMark, host: ForgedToolHost): ForgedTool {
  const base = { name: request.name, description: request.description, category: 'custom' as const, inputSchema: request.inputSchema, outputSchema: request.outputSchema, forged: { ...mark } };
  if (request.implementation.mode === 'compose') {
    const { definition, problems } = composeDefinition(request);
    if (!definition) throw new Error(problems.join('; '));
    const spec = { ...yamlToolSpec(definition, undefined), ...base, tags: [...COMPOSITION_TAGS] };
    return { ...createYamlTool(spec, definition, { workDir: host.workDir, maxResolvedChars: MAX_COMPOSED_CHARS }), ...base, tags: spec.tags };
  }
  const allow = readAllowlist(request.implementation.allowlist);
  const sandbox = new SandboxProcess(host.codeFile, allow, host.limits);
  return {
    ...base,
    tags: ['read', 'forged', ...(allow.hosts.length ? ['network'] : [])],
    ...(allow.tools.length ? { composedOf: allow.tools } : {}),
    // The sandbox stops the code at its own cap; the registry's timeout is the backstop.
    timeoutMs: host.limits.timeoutMs + 2000,
    async execute(args: unknown, ctx: ToolContext): Promise<ToolResult> {
      const outcome = await sandbox.call(args, bridgeFor(allow, ctx, host), ctx.signal);
      if (outcome.ok) return ok(outcome.value);
      return fail(outcome.code, `tool "${request.name}": ${outcome.message}`);
    },
    close: () => sandbox.close(),
  };
}

/** The host's answers to the code's tools.call and fetch: the scoped registry and the egress-checked HTTP client. */
function bridgeFor(allow: SandboxAllow, ctx: ToolContext, host: ForgedToolHost): BridgeHandler {
  const http = host.http;
  return async (kind, request) => {
    const r = request as Record<string, unknown>;
    if (kind === 'tool') {
      const name = String(r.name);
      if (!allow.tools.includes(name)) return { ok: false, error: `tool "${name}" is not in the allowlist` };
      // Checked again at each call: emergent.allow_tools may have been narrowed while the code ran.
      const settings = host.settings();
      if (!toolAllowed(name, settings)) return { ok: false, error: `tool "${name}" is not one of the tools forged tools may use (emergent.allow_tools: ${settings.allow_tools.join(', ')})` };
      const result = await ctx.registry.execute(name, r.args ?? {}, { signal: ctx.signal });
      return result.ok ? { ok: true, value: result.value } : { ok: false, error: `${result.error.code}: ${result.error.message}` };
    }
    let url: URL;
    try {
      url = new URL(String(r.url));
    } catch {
      return { ok: false, error: `"${r.url}" is not a URL` };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, error: `fetch reaches http and https URLs only, not ${url.protocol}` };
    const checkHop = allowlistedHost(allow);
    const refusal = checkHop(url);
    if (refusal) return { ok: false, error: refusal };
    try {
      const headers = r.headers && typeof r.headers === 'object' ? Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)])) : {};
      // Every redirect target is checked too: an allowlisted host could otherwise send the code anywhere the egress policy allows.
      const response = await http.request({ url, method: String(r.method ?? 'GET'), headers, body: typeof r.body === 'string' ? r.body : undefined, maxResponseBytes: 256 * 1024, timeoutMs: 10_000, signal: ctx.signal, checkHop });
      return { ok: true, value: { status: response.status, headers: response.headers, text: response.body.toString('utf8') } };
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
  };
}

/** `fetch:HOST` as the HTTP client's per-hop check: the host name must be listed (any port of it, as the entry names no port). */
function allowlistedHost(allow: SandboxAllow): (url: URL) => string | undefined {
  return (url) => (allow.hosts.includes(url.hostname.toLowerCase()) ? undefined : `fetch to ${url.hostname} is not in the allowlist (allowed: ${allow.hosts.join(', ') || 'none'})`);
}
