/** What placeholders read during one call of a YAML tool: the arguments and the results of the steps so far. */
import type { ToolError } from '../model.ts';
import type { YamlStep } from './definition.ts';
import { ownValue } from '../../own-value.ts';
import type { Reference } from './template.ts';

export interface StepResult {
  status: 'ok' | 'failed' | 'skipped';
  /** What references read: stdout as (exact) JSON when it is an object or array, else its exact text minus one trailing newline; a tool step's result value. */
  output: unknown;
  /** A step that called a tool: its output is that tool's result value. */
  fromTool?: boolean;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  /** Why a failed step failed (a called tool's error, a process that could not start...). */
  error?: ToolError;
  /** A failed python: step: the line of its script (as written in the YAML file) Python's error names, and whether the script did not compile. */
  python?: { line: number; syntax: boolean; scriptFile: string; lines: readonly number[] };
}

export const SKIPPED: StepResult = { status: 'skipped', output: null, stdout: '', stderr: '', exitCode: null };

export class RunValues {
  private readonly results = new Map<string, StepResult>();
  private readonly outputVars = new Map<string, string>();

  constructor(
    readonly args: Record<string, unknown>,
    steps: readonly YamlStep[],
  ) {
    for (const step of steps) if (step.outputVar) this.outputVars.set(step.outputVar, step.name);
  }

  record(step: string, result: StepResult): void {
    this.results.set(step, result);
  }

  result(step: string): StepResult | undefined {
    return this.results.get(step);
  }

  readonly resolve = (ref: Reference): unknown => {
    const { root, path } = ref;
    if (root === 'input') return dig(this.args, path);
    if (Object.hasOwn(this.args, root)) return dig(this.args[root], path);
    const varStep = this.outputVars.get(root);
    if (varStep !== undefined) return dig(this.results.get(varStep)?.output, path);
    const result = this.results.get(root);
    if (!result) return undefined;
    const [field = 'output', ...rest] = path;
    switch (field) {
      case 'stdout':
        return result.stdout;
      case 'stderr':
        return result.stderr;
      case 'exit-code':
        return result.exitCode;
      default:
        return dig(result.output, rest);
    }
  };
}

function dig(value: unknown, path: readonly string[]): unknown {
  let node = value;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    // Own fields only: {a.constructor} is no value of a's (an array's indexes and length are its own).
    node = ownValue(node as Record<string, unknown>, key);
  }
  return node;
}
