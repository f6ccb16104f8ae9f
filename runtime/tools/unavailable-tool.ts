/**
 * A tool whose source no longer loads (a broken docstring, a YAML error)
 * while `forge run --dev` is serving. It stays listed under its name, and a
 * call answers with the diagnostic that says why (REST: 503), instead of a
 * "no tool named" that leaves the caller guessing and only the server log
 * knowing.
 */
import { formatDiagnostic, type Diagnostic } from '../diagnostics.ts';
import { fail, type Tool, type ToolSpec } from './model.ts';

export const UNAVAILABLE_CODE = 'FORGE_TOOL_UNAVAILABLE';

/** `previous` is the last version that loaded, when there was one (its description and category stay). */
export function unavailableTool(name: string, problems: readonly Diagnostic[], previous?: ToolSpec): Tool {
  const why = problems.map(formatDiagnostic).join('\n');
  const first = problems[0];
  return {
    name,
    description: previous?.description ?? `(cannot load) ${first?.message ?? 'the tool does not load'}`,
    category: previous?.category ?? 'custom',
    tags: previous?.tags ?? [],
    // Any arguments reach execute: the answer is the load error, not a schema complaint about a stale schema.
    inputSchema: { type: 'object' },
    ...(previous?.source ? { source: previous.source } : {}),
    async execute() {
      // Its hint is the answer's hint (REST, MCP and the model each show it), not said twice in the message too.
      return fail(UNAVAILABLE_CODE, `tool "${name}" cannot load: ${first ? formatDiagnostic({ ...first, hint: undefined }) : 'its source has errors'}`, first?.hint ?? 'fix what the location points at (forge run --dev reloads it when saved)', why);
    },
    health: () => ({ healthy: false, detail: `cannot load: ${first?.message ?? 'its source has errors'}` }),
  };
}
