import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProject } from '../../stages/load-project.ts';
import { createSourceRegistry } from '../../stages/source-registry.ts';
import { StageContext } from '../../stages/stage.ts';
import { minimalConfig, writeProject } from '../helpers/project.ts';

describe('the registry of a project run from its sources', () => {
  it('runs the YAML tool definition the project load checked, without reading the file again', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/greet.yaml': 'description: Greets.\ntags: [read]\nparameters:\n  name: { type: string }\nbash: printf "hello %s" {name}\n',
    });
    const project = await loadProject({ configFile: join(dir, 'forge.yaml') }, new StageContext(dir, false));
    // Changed after the load: what runs is still what was loaded (and checked).
    writeFileSync(join(dir, 'tools/greet.yaml'), 'this: [is not a tool\n');
    const { registry, diagnostics } = createSourceRegistry(project);
    expect(diagnostics).toEqual([]);
    expect(await registry.execute('greet', { name: 'ada' })).toMatchObject({ ok: true, value: 'hello ada' });
  });
});
