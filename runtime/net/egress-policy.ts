/**
 * The hook every outbound connection passes through. The HTTP client asks
 * the policy about the URL before connecting and about every address the
 * host name resolves to (so a public name that points at 127.0.0.1 is
 * caught, and the address checked is the address connected to).
 *
 * runtime/guard/egress.ts builds the real policy from forge.yaml's `egress:`;
 * `openEgress` allows everything (tests of the client itself, and `mode: open`).
 */

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
  checkAddress(host: string, address: string, family: 4 | 6): EgressRefusal | undefined;
}

export const openEgress: EgressPolicy = {
  checkUrl: () => undefined,
  checkAddress: () => undefined,
};

export class EgressRefusedError extends Error {
  readonly code = 'FORGE_EGRESS_REFUSED';
  constructor(readonly refusal: EgressRefusal) {
    super(`egress to ${refusal.host} refused: ${refusal.rule}`);
    this.name = 'EgressRefusedError';
    egressRefusals.inc();
  }
}
