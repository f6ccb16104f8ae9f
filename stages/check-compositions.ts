/**
 * Stage: check compositions. The tools that call other tools (composedOf)
 * must form no cycle — printed as a → b → a — and no chain deeper than the
 * runtime allows. The registry refuses both at run time too; the build
 * refuses them before anything ships. A YAML step's `args:` must fit the
 * tool it calls: names it takes, its required ones, and literal values of
 * the declared types (what every call would otherwise fail on).
 */
import { error, type Location } from '../runtime/diagnostics.ts';
import { MAX_COMPOSITION_DEPTH } from '../runtime/tools/limits.ts';
import { stepArgsProblems } from '../runtime/tools/yaml/step-args.ts';
import { checkedInputSchema } from '../runtime/tools/local-schema.ts';
import type { ProjectTool } from './project-tool.ts';
import type { StageContext } from './stage.ts';

export function checkCompositions(tools: readonly ProjectTool[], ctx: StageContext): void {
  const byName = new Map(tools.map((t) => [t.spec.name, t]));
  checkStepArguments(tools, byName, ctx);
  const callees = (name: string) => (byName.get(name)?.spec.composedOf ?? []).filter((c) => byName.has(c));
  /** Where `caller` names `callee`: its tool: step, or the tool itself. */
  const whereCalls = (caller: string, callee: string): Location => {
    const tool = byName.get(caller)!;
    const step = tool.yaml?.definition.toolSteps.find((s) => s.name === callee);
    return step ? tool.yaml!.locate(step.path) : tool.at;
  };

  // Cycles: depth-first search; each cycle is reported once, from its smallest name.
  const state = new Map<string, 'open' | 'done'>();
  const reported = new Set<string>();
  let cyclic = false;
  const visit = (name: string, path: string[]) => {
    state.set(name, 'open');
    for (const next of callees(name)) {
      if (state.get(next) === 'open') {
        cyclic = true;
        const cycle = path.slice(path.indexOf(next));
        const start = cycle.indexOf([...cycle].sort()[0]);
        const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
        const key = rotated.join('\0');
        if (reported.has(key)) continue;
        reported.add(key);
        const shown = [...rotated, rotated[0]].join(' → ');
        ctx.report(error('FORGE_TOOL_CYCLE', `tools call each other in a cycle: ${shown}`, whereCalls(rotated[rotated.length - 1], rotated[0]), 'a tool may not call, directly or through others, a tool that calls it'));
      } else if (!state.has(next)) {
        visit(next, [...path, next]);
      }
    }
    state.set(name, 'done');
  };
  for (const name of [...byName.keys()].sort()) if (!state.has(name)) visit(name, [name]);
  if (cyclic) return;

  // Depth: the longest chain of calls from each tool (memoized; the graph has no cycle now).
  const longest = new Map<string, string[]>();
  const chainFrom = (name: string): string[] => {
    let chain = longest.get(name);
    if (chain) return chain;
    chain = [name];
    for (const next of callees(name)) {
      const sub = chainFrom(next);
      if (sub.length + 1 > chain.length) chain = [name, ...sub];
    }
    longest.set(name, chain);
    return chain;
  };
  // A call at depth d sits d calls below the first; the registry refuses depth > MAX.
  const tooDeep = [...byName.keys()].sort().filter((name) => chainFrom(name).length - 1 > MAX_COMPOSITION_DEPTH);
  const calledByTooDeep = new Set(tooDeep.flatMap((name) => callees(name)));
  for (const name of tooDeep) {
    if (calledByTooDeep.has(name)) continue; // reported through its caller's longer chain
    const chain = chainFrom(name);
    ctx.report(
      error('FORGE_TOOL_DEPTH', `calls nest ${chain.length - 1} deep, deeper than the limit of ${MAX_COMPOSITION_DEPTH}: ${chain.join(' → ')}`, whereCalls(chain[0], chain[1]), 'flatten the composition: call the inner tools from fewer levels'),
    );
  }
}

/** Each YAML step's `args:` against the input schema of the tool it calls. */
function checkStepArguments(tools: readonly ProjectTool[], byName: ReadonlyMap<string, ProjectTool>, ctx: StageContext): void {
  for (const tool of tools) {
    const yaml = tool.yaml;
    if (!yaml) continue;
    for (const problem of stepArgsProblems(yaml.definition, (name) => checkedInputSchema(byName.get(name)?.spec))) {
      ctx.report(error('FORGE_STEP_ARGS', problem.message, yaml.locate(problem.path), problem.hint));
    }
  }
}
