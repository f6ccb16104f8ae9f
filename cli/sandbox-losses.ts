/**
 * What the forge sandbox enforced on a forged tool's code that a promoted
 * JavaScript tool no longer has: it runs as project code, in a tool worker
 * with full Node. `forge tool promote` prints this and writes it at the top
 * of the file, so the person reviewing the code knows what to look for
 * before tagging it read.
 */

/** One line each: what held in the sandbox. */
export const SANDBOX_LOSSES: readonly string[] = [
  'no filesystem: the code could read only itself and write nothing',
  'no processes: it could not start programs or workers',
  'no environment: it saw an empty environment, no process, require or import()',
  'memory and time caps of the emergent: settings',
];

export const PROMOTED_HINT = 'review the code before you tag it read; until then it has no read, write or run tag, so every call needs what a run tool needs';

/** What stays enforced, for the note: the generated fetch keeps the allowlist. */
export function keptNote(hosts: readonly string[]): string {
  return hosts.length ? `fetch reaches only ${hosts.join(', ')} (every redirect hop is checked)` : 'fetch reaches no host (the tool had no fetch: entries)';
}
