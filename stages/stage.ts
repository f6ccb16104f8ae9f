/**
 * What every stage shares: a diagnostic sink and a clock. The pipeline runs
 * a stage, then stops if the stage reported an error (esbuild's phase gate);
 * stages report, they never decide whether the build goes on.
 */
import { hasErrors, type Diagnostic } from '../runtime/diagnostics.ts';

export interface StageTiming {
  stage: string;
  ms: number;
}

export class StageContext {
  readonly diagnostics: Diagnostic[] = [];
  readonly timings: StageTiming[] = [];

  /**
   * With the gate open (the default) a stage that reported an error stops
   * the pipeline. `forge tool ...` closes it: one broken tool file must not
   * keep a person from listing or running the others.
   */
  constructor(
    readonly cwd: string = process.cwd(),
    readonly gate: boolean = true,
  ) {}

  report(...diagnostics: Diagnostic[]): void {
    this.diagnostics.push(...diagnostics);
  }

  get failed(): boolean {
    return hasErrors(this.diagnostics);
  }
}

/** Thrown by runStage when a stage reported errors; the pipeline turns it into a failed result. */
export class BuildStopped extends Error {
  constructor(readonly stage: string) {
    super(`build stopped after ${stage}`);
  }
}

/**
 * `startedAt` lets a stage that began earlier (overlapping another) report its whole wall time.
 * An error thrown by `work` propagates as is, even when the stage also
 * reported errors before throwing; only a stage that returns normally with
 * reported errors stops the pipeline with BuildStopped.
 */
export async function runStage<T>(ctx: StageContext, stage: string, work: () => T | Promise<T>, startedAt?: number): Promise<T> {
  const started = startedAt ?? performance.now();
  let value: T;
  try {
    value = await work();
  } finally {
    ctx.timings.push({ stage, ms: performance.now() - started });
  }
  if (ctx.gate && ctx.failed) throw new BuildStopped(stage);
  return value;
}
