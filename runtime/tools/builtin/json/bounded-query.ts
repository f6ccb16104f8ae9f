/**
 * json_parse's JMESPath query, run with a budget. The query runs on the
 * agent's own thread, and a few hundred bytes of it can ask for more than
 * that thread has: `[@,@,@,@,@,@,@,@,@,@][].[@,…]…` multiplies a value
 * tenfold per step (10⁹ items from the text `1` killed the server with an
 * out-of-memory abort, 10⁷ held it for seconds), `pad_left('', `1e9`)` asks
 * for a gigabyte string. So every step of the interpreter is counted, and a
 * step that would make an array, a string or a result past the budget
 * stops the query with QueryBudgetExceeded before it allocates that:
 *
 *   - flattening (`[]`) is counted before it runs, from the lengths it would join;
 *   - `pad_left`, `pad_right`, `replace`, `join` and `to_string`, the functions whose
 *     output can outgrow their input, are measured before they run;
 *   - every array a step makes counts toward a total, every string is held to a length;
 *   - the result is measured as it would be written out, shared parts counted each time.
 *
 * The limits scale with the text parsed, so a large document's plain
 * selections are never refused. The interpreter is the library's own; the
 * count is a wrapper around its visit() and callFunction(), active only
 * while a bounded query runs (one at a time: the query is synchronous).
 */
import { search, TreeInterpreter } from '@jmespath-community/jmespath';

export class QueryBudgetExceeded extends Error {}

interface Budget {
  steps: number;
  items: number;
  readonly maxSteps: number;
  readonly maxItems: number;
  readonly maxChars: number;
}

let active: Budget | undefined;

/** `search(value, query)` within a budget scaled to `textLength`, the size of the JSON text `value` was parsed from. */
export function boundedSearch(value: unknown, query: string, textLength: number): unknown {
  wrapInterpreter();
  // A megabyte of text (the HTTP body limit) keeps the base limits; a larger text given through forge tool run or a composed tool scales them.
  const scale = Math.max(1, textLength / 1_000_000);
  const budget: Budget = { steps: 0, items: 0, maxSteps: 3_000_000 * scale, maxItems: 2_000_000 * scale, maxChars: 16_000_000 * scale };
  active = budget;
  try {
    const result = search(value as never, query);
    checkWrittenSize(result, budget);
    return result;
  } finally {
    active = undefined;
  }
}

type Visit = (this: unknown, node: { type: string; child?: unknown }, value: unknown) => unknown;
type CallFunction = (this: unknown, name: string, args: unknown[]) => unknown;

let wrapped = false;

/** Wraps the interpreter class's visit() (a `let` scope makes interpreters of its own) and the function runtime's callFunction(). */
function wrapInterpreter(): void {
  if (wrapped) return;
  wrapped = true;
  const interpreter = Object.getPrototypeOf(TreeInterpreter) as { visit: Visit };
  const visit = interpreter.visit;
  interpreter.visit = function (node, value) {
    const budget = active;
    if (!budget) return visit.call(this, node, value);
    if (++budget.steps > budget.maxSteps) throw new QueryBudgetExceeded(`the query takes more than ${budget.maxSteps.toLocaleString('en')} steps`);
    if (node.type === 'Flatten') {
      // The library's flatten is original.flat(): its length is known before it is made.
      const original = (this as { visit: Visit }).visit(node.child as never, value);
      if (!Array.isArray(original)) return null;
      let length = 0;
      for (const item of original) length += Array.isArray(item) ? item.length : 1;
      countItems(budget, length);
      return original.flat();
    }
    const result = visit.call(this, node, value);
    if (Array.isArray(result)) countItems(budget, result.length);
    else if (typeof result === 'string') countChars(budget, result.length);
    return result;
  };
  const runtime = Object.getPrototypeOf((TreeInterpreter as unknown as { runtime: object }).runtime) as { callFunction: CallFunction };
  const callFunction = runtime.callFunction;
  runtime.callFunction = function (name, args) {
    if (active) countChars(active, outputBound(name, args, active));
    return callFunction.call(this, name, args);
  };
}

function countItems(budget: Budget, length: number): void {
  if (length > budget.maxItems || (budget.items += length) > budget.maxItems * 5) {
    throw new QueryBudgetExceeded(`the query makes more than ${budget.maxItems.toLocaleString('en')} items`);
  }
}

function countChars(budget: Budget, length: number): void {
  if (length > budget.maxChars) throw new QueryBudgetExceeded(`the query makes a string of more than ${budget.maxChars.toLocaleString('en')} characters`);
}

/** At most how long the string a function would return is (0 for those whose output cannot outgrow their input). */
function outputBound(name: string, args: unknown[], budget: Budget): number {
  const length = (value: unknown) => (typeof value === 'string' ? value.length : 0);
  switch (name) {
    case 'pad_left':
    case 'pad_right':
      return Math.max(length(args[0]), typeof args[1] === 'number' ? args[1] : 0);
    case 'replace': {
      const [subject, old, by] = args.map(length);
      // Every occurrence of `old` (each position when it is empty) replaced by `by`.
      return subject + (subject / Math.max(1, old) + 1) * by;
    }
    case 'join':
      return Array.isArray(args[1]) ? args[1].reduce((sum: number, item) => sum + length(item) + length(args[0]), 0) : 0;
    case 'to_string':
      return typeof args[0] === 'string' ? 0 : writtenSize(args[0], budget.maxChars);
    default:
      return 0;
  }
}

function checkWrittenSize(result: unknown, budget: Budget): void {
  if (writtenSize(result, budget.maxChars) > budget.maxChars) {
    throw new QueryBudgetExceeded(`the query's result is more than ${budget.maxChars.toLocaleString('en')} characters written out`);
  }
}

/**
 * About how many characters `value` is as JSON, counting a part it holds twice twice (as JSON.stringify
 * writes it), and stopping once past `limit`: the walk costs at most that many steps, never the blow-up.
 */
function writtenSize(value: unknown, limit: number): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length && size <= limit) {
    const item = stack.pop();
    if (typeof item === 'string') size += item.length + 2;
    else if (Array.isArray(item)) {
      size += 2 + item.length;
      for (let i = item.length - 1; i >= 0 && stack.length < limit; i--) stack.push(item[i]);
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) {
        size += key.length + 4;
        stack.push(child);
      }
      size += 2;
    } else size += 6;
  }
  return size;
}
