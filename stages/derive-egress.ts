/**
 * The egress section of agent.json: forge.yaml's `egress:` plus every host
 * the build can see the agent will need — the model's provider and its
 * fallbacks, MCP servers over HTTP, APIs, and the endpoints each enabled
 * shipped tool declares for its config (pinned webhooks, web_search's
 * providers) — so that an allowlist is complete without listing them twice.
 *
 * A non-public address written in forge.yaml (an Ollama on 127.0.0.1, an
 * MCP server on localhost) is added to allowed_addresses with its port
 * (`127.0.0.1:11434`): writing the endpoint is the explicit permission, for
 * that endpoint only — not for every other service on the same machine (an
 * admin port, the agent's own). An address that comes from an OpenAPI
 * document is not added: only its host name is allowed.
 */
import { warning, type Diagnostic, type Location } from '../runtime/diagnostics.ts';
import { canonicalHost } from '../runtime/guard/egress.ts';
import { addressEntry, classifyAddress, isPublic, parseAddressRule, ruleAllows } from '../runtime/guard/ip-address.ts';
import { urlPort } from '../runtime/net/egress-policy.ts';
import type { EgressSettings, ModelRef } from '../runtime/manifest.ts';
import type { ApiSettings } from '../runtime/tools/adapters/settings.ts';
import { findCatalogEntry, toolGroup } from '../runtime/tools/catalog.ts';
import type { ProjectConfig } from './config/project-config.ts';

/** Where each provider's API is when no base_url is given. */
const PROVIDER_HOSTS: Record<ModelRef['provider'], string> = { openai: 'api.openai.com', anthropic: 'api.anthropic.com' };
/** "localhost" is loopback by definition (RFC 6761). */
const LOCALHOST_ADDRESSES = ['127.0.0.1', '::1'];

export interface Endpoint {
  url: string;
  /** What needs it, for messages: "mcp.servers[docs].url". */
  from: string;
  /** Written in forge.yaml (so a private address in it is explicitly allowed). */
  explicit: boolean;
  at?: Location;
}

export interface DerivedEgress {
  egress: EgressSettings;
  /** Entries the build added, with what needed them. */
  derived: { entry: string; from: string }[];
  diagnostics: Diagnostic[];
}

/** The endpoints the agent will reach, from forge.yaml, the enabled shipped tools (`toolEndpoints`) and the resolved APIs. */
export function collectEndpoints(config: ProjectConfig, toolEndpoints: readonly Endpoint[], apis: readonly ApiSettings[]): Endpoint[] {
  const endpoints: Endpoint[] = [];
  const models: [ModelRef, string][] = config.model ? [[config.model, 'model'], ...(config.model.fallbacks ?? []).map((m, i): [ModelRef, string] => [m, `model.fallbacks[${i}]`])] : [];
  for (const [model, from] of models) {
    endpoints.push({ url: model.base_url ?? `https://${PROVIDER_HOSTS[model.provider]}`, from, explicit: model.base_url !== undefined });
  }
  for (const server of config.mcpServers) {
    if (server.transport === 'http' && server.url) endpoints.push({ url: server.url, from: `mcp.servers[${server.name}]`, explicit: true, at: server.at });
  }
  for (const api of apis) {
    const configured = config.apis.find((a) => a.name === api.name);
    endpoints.push({ url: api.base_url, from: `apis[${api.name}]`, explicit: configured?.base_url !== undefined, at: configured?.at });
  }
  endpoints.push(...toolEndpoints);
  return endpoints;
}

/** The endpoints the shipped tools forge.yaml enables declare for their config (groups expanded; unknown names are annotate's to report). */
export async function shippedToolEndpoints(config: ProjectConfig): Promise<Endpoint[]> {
  const enabled = config.tools.flatMap((entry): { name: string; config?: Record<string, unknown> }[] => toolGroup(entry.name)?.map((name) => ({ name })) ?? [entry]);
  const perTool = await Promise.all(
    enabled.map(async ({ name, config: toolConfig }): Promise<Endpoint[]> => {
      const definition = (await findCatalogEntry(name)?.load())?.default;
      return (definition?.endpoints?.(toolConfig ?? {}) ?? []).map(({ url, explicit, key }) => ({ url, explicit, from: key ? `${name} ${key}` : name }));
    }),
  );
  return perTool.flat();
}

export function deriveEgress(configured: EgressSettings, endpoints: readonly Endpoint[]): DerivedEgress {
  const domains = new Set(configured.allowed_domains);
  const addresses = new Set(configured.allowed_addresses ?? []);
  const ports = new Set<number>();
  const derived: DerivedEgress['derived'] = [];
  const diagnostics: Diagnostic[] = [];
  const add = (set: Set<string>, entry: string, from: string) => {
    if (set.has(entry)) return;
    set.add(entry);
    derived.push({ entry, from });
  };

  for (const endpoint of endpoints) {
    const host = URL.canParse(endpoint.url) ? canonicalHost(new URL(endpoint.url).hostname) : undefined;
    // A URL with a ${VAR} in its host is only known at run time: it must be listed by hand.
    if (!host || /[${}]/.test(host)) {
      diagnostics.push(warning('FORGE_EGRESS_UNKNOWN', `the host of ${endpoint.from} (${endpoint.url}) is only known at run time`, endpoint.at ?? {}, 'list it in egress.allowed_domains'));
      continue;
    }
    if (configured.mode === 'deny-all') {
      diagnostics.push(warning('FORGE_EGRESS_DENY_ALL', `egress.mode is deny-all, so ${endpoint.from} (${host}) cannot be reached`, endpoint.at ?? {}, 'set egress.mode to allowlist'));
      continue;
    }
    const literal = classifyAddress(host);
    const port = urlPort(new URL(endpoint.url));
    if (configured.mode === 'allowlist' && (!literal || isPublic(literal))) {
      add(domains, host, endpoint.from);
      // A public endpoint off 80/443 (a gateway on :8443) needs its port open in k8s/networkpolicy.yaml.
      if (port !== 80 && port !== 443 && host !== 'localhost') ports.add(port);
    }
    if (!endpoint.explicit) {
      // Not written in forge.yaml (an API spec's server on 127.0.0.1): not allowed, so every call would be refused.
      const candidates = literal ? [literal] : host === 'localhost' ? LOCALHOST_ADDRESSES.map((a) => classifyAddress(a)!) : [];
      const allowed = candidates.some((address) =>
        (configured.allowed_addresses ?? []).some((text) => {
          const rule = parseAddressRule(text);
          return rule !== undefined && ruleAllows(rule, address, port);
        }),
      );
      if (candidates.length && !candidates.some(isPublic) && !allowed) {
        diagnostics.push(
          warning('FORGE_EGRESS_PRIVATE', `${endpoint.from} reaches ${endpoint.url}, which is not a public address and is not written in forge.yaml: the egress policy will refuse every call to it`, endpoint.at ?? {}, `write it in forge.yaml (base_url: ${endpoint.url}), where a non-public address is allowed as written, or list ${candidates.map((a) => addressEntry(a.address, port)).join(' and ')} in egress.allowed_addresses`),
        );
      }
      continue;
    }
    if (literal && !isPublic(literal)) add(addresses, addressEntry(literal.address, port), endpoint.from);
    if (host === 'localhost') for (const a of LOCALHOST_ADDRESSES) add(addresses, addressEntry(a, port), endpoint.from);
  }
  return {
    egress: { mode: configured.mode, allowed_domains: [...domains].sort(), allowed_addresses: [...addresses].sort(), ...(ports.size ? { endpoint_ports: [...ports].sort((a, b) => a - b) } : {}) },
    derived,
    diagnostics,
  };
}
