/**
 * The scope of a `forge tool` command: `--scope local|user|global|any`, or
 * cycod's short flags `-l` (--local), `-u` (--user), `-g` (--global) and
 * `-a` (--any). `any` means every scope: list shows them all, get looks in
 * resolution order.
 */
import { UsageError } from './usage-error.ts';

export const SCOPE_OPTIONS = {
  scope: { type: 'string' },
  local: { type: 'boolean', short: 'l', default: false },
  user: { type: 'boolean', short: 'u', default: false },
  global: { type: 'boolean', short: 'g', default: false },
  any: { type: 'boolean', short: 'a', default: false },
} as const;

export const SCOPE_USAGE = `  --scope S       local, user, global, or any (every scope)
  -l, -u, -g, -a  the same as --scope local / user / global / any`;

export type ScopeChoice = 'local' | 'user' | 'global' | 'any';

export function chosenScope(values: { scope?: string; local?: boolean; user?: boolean; global?: boolean; any?: boolean }): ScopeChoice | undefined {
  const flagged = (['local', 'user', 'global', 'any'] as const).filter((s) => values[s]);
  const all = [...new Set([...flagged, ...(values.scope !== undefined ? [values.scope] : [])])];
  if (all.length > 1) throw new UsageError(`choose one scope, not ${all.join(' and ')}`);
  const scope = all[0];
  if (scope !== undefined && !['local', 'user', 'global', 'any'].includes(scope)) throw new UsageError(`unknown scope "${scope}"`, 'scopes: local, user, global, any');
  return scope as ScopeChoice | undefined;
}
