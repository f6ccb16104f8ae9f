/**
 * allow/deny (MCP tools) and include/exclude (API operations): globs over
 * names. Nothing listed in allow means everything; deny always wins.
 */
import { picomatch } from '../../vendor/libs.ts';

export interface NameFilter {
  allows(name: string): boolean;
  /** Allow patterns that matched none of `names` (probably a typo). */
  unused(names: readonly string[]): string[];
  /** Deny patterns that matched none of `names`: a typo there leaves the tool it meant let through. */
  unusedDeny(names: readonly string[]): string[];
}

export function createNameFilter(allow: readonly string[] | undefined, deny: readonly string[] | undefined): NameFilter {
  const allowed = (allow ?? []).map((p) => [p, picomatch(p)] as const);
  const denied = (deny ?? []).map((p) => [p, picomatch(p)] as const);
  const unmatched = (patterns: readonly (readonly [string, (name: string) => boolean])[], names: readonly string[]) => patterns.filter(([, m]) => !names.some((n) => m(n))).map(([p]) => p);
  return {
    allows: (name) => (allowed.length === 0 || allowed.some(([, m]) => m(name))) && !denied.some(([, m]) => m(name)),
    unused: (names) => unmatched(allowed, names),
    unusedDeny: (names) => unmatched(denied, names),
  };
}
