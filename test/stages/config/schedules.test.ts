import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../stages/config/load-config.ts';

const load = (schedules: string) => loadConfigText('/project/forge.yaml', `agent_id: a\nversion: 1.0.0\nschedules:\n${schedules}`, '/project');

describe('forge.yaml schedules', () => {
  it('reads tasks into the config as read-only (source "config")', async () => {
    const { config, diagnostics } = await load(`  - id: daily-report\n    cron: "0 9 * * 1-5"\n    task: Summarize yesterday.\n    timezone: Europe/Paris\n  - id: poll\n    cron: "@every 10m"\n    task: Check the queue.\n`);
    expect(diagnostics).toEqual([]);
    expect(config!.schedules).toEqual([
      { id: 'daily-report', cron: '0 9 * * 1-5', task: 'Summarize yesterday.', timezone: 'Europe/Paris', source: 'config' },
      { id: 'poll', cron: '@every 10m', task: 'Check the queue.', source: 'config' },
    ]);
  });

  it('defaults to no schedules', async () => {
    const { config } = await loadConfigText('/project/forge.yaml', 'agent_id: a\nversion: 1.0.0\n', '/project');
    expect(config!.schedules).toEqual([]);
  });

  it.each([
    ['  - id: x\n    cron: "61 * * * *"\n    task: t\n', 'FORGE_SCHEDULE_CRON', 5, /Invalid value for minute/],
    ['  - id: x\n    cron: "@daily"\n    task: t\n    timezone: Europe/Pari\n', 'FORGE_SCHEDULE_CRON', 7, /unknown time zone/],
    ['  - id: x\n    cron: "@daily"\n    task: t\n  - id: x\n    cron: "@hourly"\n    task: u\n', 'FORGE_SCHEDULE_DUPLICATE', 7, /used twice/],
    ['  - id: Bad_Id\n    cron: "@daily"\n    task: t\n', 'FORGE_CONFIG_SCHEMA', 4, /pattern|id/],
    ['  - id: x\n    task: t\n', 'FORGE_CONFIG_SCHEMA', undefined, /cron/],
  ])('reports %j at its line', async (yaml, code, line, message) => {
    const { config, diagnostics } = await load(yaml);
    expect(config).toBeUndefined();
    const problem = diagnostics.find((d) => d.severity === 'error')!;
    expect(problem.code).toMatch(code === 'FORGE_CONFIG_SCHEMA' ? /^FORGE_CONFIG/ : new RegExp(`^${code}$`));
    expect(problem.message + (problem.hint ?? '')).toMatch(message);
    if (line) expect(problem.line).toBe(line);
  });
});
