/**
 * Exact output over REST, end to end: the corpus (corpus.ts) through each
 * kind of tool, served by `forge run --dev` (a real server), must come back
 * byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../../helpers/agent-process.ts';
import { forgeBin, minimalConfig, writeProject } from '../../helpers/project.ts';
import { PROBES, probesFor, TOOL_NAMES, TOOLS } from './corpus.ts';

let agent: AgentProcess;

beforeAll(async () => {
  const project = writeProject({ 'forge.yaml': minimalConfig(), ...TOOLS });
  agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth', '--host', '127.0.0.1'], { cwd: project });
}, 60_000);

afterAll(async () => {
  await agent?.stop();
});

describe('a YAML tool printing a JSON object or array', () => {
  it('returns it parsed, numbers a double would change kept as their text', async () => {
    for (const [value, expected] of [['{"a": 1}', { a: 1 }], ['  [1, 2]  ', [1, 2]], ['{"big": 12345678901234567890, "inf": 1e999, "s": "1e999"}', { big: '12345678901234567890', inf: '1e999', s: '1e999' }]] as const) {
      const body = (await fetch(`${agent.url}/tools/echo_yaml`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ value }) }).then((r) => r.json())) as { value: unknown };
      expect(body.value).toEqual(expected);
    }
  });
});

describe.each(TOOL_NAMES)('%s returns its output exactly over REST', (tool) => {
  it.each(PROBES.map(([what, value]) => [what, value, tool] as const).filter(([, value]) => probesFor(tool).some(([, v]) => v === value)))('%s', async (_what, value) => {
    const response = await fetch(`${agent.url}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ value }) });
    const body = (await response.json()) as { ok: boolean; value: unknown };
    expect(body.ok, JSON.stringify(body)).toBe(true);
    expect(body.value).toBe(value);
  });
});
