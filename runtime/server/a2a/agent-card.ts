/**
 * The agent's A2A card, derived from agent.json: one skill per tool, the
 * JSON-RPC endpoint for both protocol generations, streaming, push
 * notifications (push-notifications.ts), and bearer auth when it is on.
 * `legacyAgentCard` is the same card in the v0.3 shape (served at
 * /.well-known/agent.json, and to clients that ask for v0.3).
 */
import type { AgentCard } from '../../vendor/a2a.ts';
import type { AgentManifest } from '../../manifest.ts';

export function buildAgentCard(manifest: AgentManifest, baseUrl: string, authRequired: boolean): AgentCard {
  const url = `${baseUrl.replace(/\/+$/, '')}/a2a`;
  return {
    name: manifest.agent_id,
    description: manifest.description || `${manifest.agent_id} (a Forge agent)`,
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
    ],
    provider: undefined,
    version: manifest.version,
    // Under egress deny-all every webhook is refused: the card does not offer what no client could use.
    capabilities: { streaming: true, pushNotifications: manifest.egress?.mode !== 'deny-all', extensions: [], extendedAgentCard: false },
    securitySchemes: authRequired ? { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'The agent token (FORGE_AUTH_TOKEN or .forge/runtime.token)', scheme: 'Bearer', bearerFormat: '' } } } } : {},
    securityRequirements: authRequired ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: manifest.tools.map((tool) => ({
      id: tool.name,
      name: tool.name,
      description: tool.description,
      tags: [tool.category, ...tool.tags],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    })),
    signatures: [],
  };
}

/** The v1.0 card as JSON on the wire (the SDK's codec, loaded when a card is first asked for). */
export async function agentCardJson(card: AgentCard): Promise<unknown> {
  const { AgentCard: codec } = await import('../../vendor/a2a.ts');
  return codec.toJSON(card);
}

/** The same card in the A2A v0.3 shape. */
export function legacyAgentCard(card: AgentCard): Record<string, unknown> {
  const primary = card.supportedInterfaces[0];
  const legacy: Record<string, unknown> = {
    protocolVersion: '0.3.0',
    name: card.name,
    description: card.description,
    url: primary.url,
    preferredTransport: 'JSONRPC',
    version: card.version,
    capabilities: { streaming: card.capabilities?.streaming ?? false, pushNotifications: card.capabilities?.pushNotifications ?? false },
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map(({ id, name, description, tags }) => ({ id, name, description, tags })),
  };
  if (Object.keys(card.securitySchemes).length) {
    legacy.securitySchemes = { bearer: { type: 'http', scheme: 'bearer', description: 'The agent token' } };
    legacy.security = [{ bearer: [] }];
  }
  return legacy;
}
