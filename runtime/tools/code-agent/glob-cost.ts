/**
 * What a glob a caller sends may cost before it is matched on the agent's
 * thread. fast-glob expands braces into one pattern each before it walks
 * (brace-expansions.ts), and picomatch turns each `*` of a path segment into
 * a lazy `[^/]*?`: `*a*a*a*a*b` against a 240-character file name backtracks
 * for 35 s, `**\/*a*a*a*a*a*b` for minutes, holding every front end. A glob is
 * refused past 1,024 brace expansions or 3 wildcards in one segment (`**`,
 * a whole segment, is none: it matches segments, not characters).
 */
import { fail, type ToolResult } from '../model.ts';
import { braceExpansions } from './brace-expansions.ts';

const MAX_EXPANSIONS = 1024;
const MAX_SEGMENT_WILDCARDS = 3;

/** The refusal of a glob (`label`: how the tool names it, "pattern" or "glob") that costs too much, or undefined. */
export function globCostRefusal(glob: string, label: string): ToolResult | undefined {
  const problem = globCostProblem(glob);
  if (problem === undefined) return undefined;
  const shown = glob.length > 200 ? `${glob.slice(0, 200)}…` : glob;
  return fail('FORGE_GLOB_PATTERN', `${label} "${shown}" ${problem}`, 'use fewer brace lists and ranges ({a,b}, {1..9}) and wildcards per name, or several narrower searches');
}

/** Why `pattern` is refused, or undefined when it may be matched. */
export function globCostProblem(pattern: string): string | undefined {
  if (braceExpansions(pattern, MAX_EXPANSIONS) > MAX_EXPANSIONS) return `expands to more than ${MAX_EXPANSIONS} patterns`;
  const crowded = pattern.split('/').find((segment) => segment !== '**' && wildcards(segment) > MAX_SEGMENT_WILDCARDS);
  if (crowded !== undefined) return `has more than ${MAX_SEGMENT_WILDCARDS} wildcards (* or ?) in one segment ("${crowded.length > 60 ? `${crowded.slice(0, 60)}…` : crowded}")`;
  return undefined;
}

/** The runs of `*` and `?` in a path segment, each run one wildcard (`**` inside a name acts as `*`); escaped ones are text. */
function wildcards(segment: string): number {
  let count = 0;
  for (let i = 0; i < segment.length; i++) {
    if (segment[i] === '\\') {
      i++;
      continue;
    }
    if (segment[i] !== '*' && segment[i] !== '?') continue;
    count++;
    while (segment[i + 1] === '*' || segment[i + 1] === '?') i++;
  }
  return count;
}
