/**
 * Exact output through the CLI, end to end: the corpus (corpus.ts) through
 * each kind of tool with `forge tool run --json` must come back byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../../helpers/project.ts';
import { probesFor, TOOL_NAMES, TOOLS } from './corpus.ts';

const project = writeProject({ 'forge.yaml': minimalConfig(), ...TOOLS });

// The four tools' loops run side by side: each waits on its own `forge` processes.
describe.concurrent.each(TOOL_NAMES)('%s returns its output exactly through forge tool run --json', (tool) => {
  it('every probe', async () => {
    for (const [what, value] of probesFor(tool)) {
      const run = await forge(['tool', 'run', tool, '--json', '--param', `value=${value}`], project);
      expect(run.code, `${what}: ${run.stderr}`).toBe(0);
      expect((JSON.parse(run.stdout) as { value: unknown }).value, what).toBe(value);
    }
  }, 240_000);
});
