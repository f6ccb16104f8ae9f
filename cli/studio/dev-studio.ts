/**
 * The studio as `forge run --dev` offers it. Only on a loopback host: the
 * page is opened with a link that carries the bearer token in its fragment
 * (#token=…), which the browser keeps to itself (never sent in a request
 * or a Referer); the page moves it to the tab's sessionStorage and takes it
 * out of the address bar. Every studio API call then sends it as a bearer
 * token, like any client. On any other host the studio stays off.
 */
import { LOOPBACK_HOSTS } from '../../runtime/server/auth.ts';
import type { ToolRegistry } from '../../runtime/tools/registry.ts';
import { createStudio, type Studio } from './studio-routes.ts';

export function devStudio(options: { dev: boolean; host: string; agentId: string; registry: ToolRegistry }): Studio | undefined {
  if (!options.dev || !LOOPBACK_HOSTS.has(options.host)) return undefined;
  return createStudio({ agentId: options.agentId, registry: options.registry });
}

export function studioLink(url: string, token: string | undefined): string {
  return `${url}/studio${token ? `#token=${encodeURIComponent(token)}` : ''}`;
}
