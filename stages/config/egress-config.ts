/**
 * The checks on forge.yaml's `egress:` that its schema cannot make: every
 * allowed_addresses entry must parse as an address (with a port or without)
 * or a CIDR range, and every
 * allowed_domains entry as a host name.
 */
import { error, type Diagnostic } from '../../runtime/diagnostics.ts';
import { parseDomainRule } from '../../runtime/guard/egress.ts';
import { parseAddressRule } from '../../runtime/guard/ip-address.ts';
import type { EgressSettings } from '../../runtime/manifest.ts';
import type { YamlSource } from './yaml-source.ts';

export function checkEgressConfig(egress: EgressSettings, source: YamlSource): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  (egress.allowed_addresses ?? []).forEach((entry, i) => {
    if (!parseAddressRule(entry)) {
      diagnostics.push(error('FORGE_CONFIG_VALUE', `"egress.allowed_addresses[${i}]" is not an IP address or CIDR range: "${entry}"`, source.locate(['egress', 'allowed_addresses', i]), 'write an address such as 127.0.0.1 or ::1, one port of it such as 127.0.0.1:11434 or [::1]:11434, or a range such as 10.0.0.0/8'));
    }
  });
  egress.allowed_domains.forEach((entry, i) => {
    if (!parseDomainRule(entry)) {
      diagnostics.push(error('FORGE_CONFIG_VALUE', `"egress.allowed_domains[${i}]" is not a host name: "${entry}"`, source.locate(['egress', 'allowed_domains', i]), 'write a host such as api.github.com, or *.example.com for its subdomains'));
    }
  });
  return diagnostics;
}
