/**
 * A diagnostic's notes (its other locations) as the `forge` command prints
 * them: under the message, each with its location and the source line with
 * a caret, and as data in --json.
 */
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../helpers/project.ts';

describe('diagnostic notes', () => {
  const project = () =>
    writeProject({
      'forge.yaml': minimalConfig('tools:\n  - name: cli_execute\n    config: { allowed_binaries: [ls] }\n  - name: cli_execute\n    config: { allowed_binaries: [cat] }\n'),
    });

  it('prints each note under its message with its own location and caret', async () => {
    const result = await forge(['validate'], project());
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n');
    const at = lines.findIndex((l) => l.includes('FORGE_CONFIG_DUPLICATE'));
    expect(lines[at]).toMatch(/^✘ forge\.yaml:7:\d+ FORGE_CONFIG_DUPLICATE tool "cli_execute" is configured twice$/);
    const noteAt = lines.findIndex((l, i) => i > at && l.includes('note:'));
    expect(lines[noteAt]).toMatch(/^ {2}note: forge\.yaml:5:\d+ first configured here$/);
    expect(lines[noteAt + 1]).toMatch(/^ {4}5 │ {3}- name: cli_execute$/);
    expect(lines[noteAt + 2]).toMatch(/^ {6}│ +\^$/);
  });

  it('carries the notes as data in --json, without the source lines', async () => {
    const result = await forge(['validate', '--json'], project());
    const out = JSON.parse(result.stdout);
    const duplicate = out.errors.find((e: { code: string }) => e.code === 'FORGE_CONFIG_DUPLICATE');
    expect(duplicate).toMatchObject({ file: 'forge.yaml', line: 7, notes: [{ text: 'first configured here', file: 'forge.yaml', line: 5 }] });
    expect(duplicate.notes[0].lineText).toBeUndefined();
  });
});
