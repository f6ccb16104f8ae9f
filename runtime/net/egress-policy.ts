/**
 * The hook every outbound connection passes through. The HTTP client asks
 * the policy about the URL before connecting and about every address the
 * host name resolves to (so a public name that points at 127.0.0.1 is
 * caught, and the address checked is the address connected to).
 *
 * runtime/guard/egress.ts builds the real policy from forge.yaml's `egress:`;
 * `openEgress` allows everything (tests of the client itself, and `mode: open`).
 */
import { ForgeError } from '../diagnostics.ts';

import { egressRefusals } from '../telemetry/forge-metrics.ts';

export interface EgressRefusal {
  host: string;
  /** The rule that refused it, e.g. "egress.mode is deny-all" or "169.254.169.254 is a cloud metadata address". */
  rule: string;
  /** What to change in forge.yaml to allow it, when that is an option. */
  hint?: string;
}

export interface EgressPolicy {
  checkUrl(url: URL): EgressRefusal | undefined;
  /** `port` is the TCP port the connection is for: an allowed address may be allowed on one port only. */
  checkAddress(host: string, address: string, family: 4 | 6, port: number): EgressRefusal | undefined;
}

/** The TCP port a URL connects to (URL leaves `port` empty for the scheme's default). */
export function urlPort(url: URL): number {
  return Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
}

export const openEgress: EgressPolicy = {
  checkUrl: () => undefined,
  checkAddress: () => undefined,
};

export class EgressRefusedError extends ForgeError {
  declare readonly code: 'FORGE_EGRESS_REFUSED';
  constructor(readonly refusal: EgressRefusal) {
    super('FORGE_EGRESS_REFUSED', `egress to ${refusal.host} refused: ${refusal.rule}`);
    egressRefusals.inc();
  }
}
