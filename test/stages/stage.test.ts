import { describe, expect, it } from 'vitest';
import { error } from '../../runtime/diagnostics.ts';
import { BuildStopped, runStage, StageContext } from '../../stages/stage.ts';

describe('the phase gate', () => {
  it('keeps the error a stage throws after reporting an error, instead of replacing it with BuildStopped', async () => {
    const ctx = new StageContext();
    const thrown = new Error('the stage broke');
    const running = runStage(ctx, 'broken', () => {
      ctx.report(error('FORGE_CONFIG_TYPE', 'reported first', {}));
      throw thrown;
    });
    await expect(running).rejects.toBe(thrown);
    expect(ctx.timings.map((t) => t.stage)).toEqual(['broken']);
  });

  it('stops after a stage that returns having reported an error', async () => {
    const ctx = new StageContext();
    await expect(runStage(ctx, 'reporting', () => ctx.report(error('FORGE_CONFIG_TYPE', 'bad', {})))).rejects.toBeInstanceOf(BuildStopped);
  });

  it('goes on with the gate closed, and passes a clean stage its value', async () => {
    const closed = new StageContext(process.cwd(), false);
    await expect(runStage(closed, 'reporting', () => (closed.report(error('FORGE_CONFIG_TYPE', 'bad', {})), 7))).resolves.toBe(7);
    await expect(runStage(new StageContext(), 'clean', async () => 'ok')).resolves.toBe('ok');
  });
});
