import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, tempDir, writeProject } from '../helpers/project.ts';

describe('forge doctor', () => {
  it('says what the machine gives the guards, from the project\'s forge.yaml', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('sandbox:\n  mode: required\n  memory: 512MB\n') });
    const { code, stdout } = await forge(['doctor', '--json'], project, { FORGE_STATE_DIR: tempDir() });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      ok: true,
      checks: [
        { name: 'isolation', ok: true, detail: expect.stringContaining('bubblewrap at ') },
        { name: 'limits', ok: true, detail: expect.stringMatching(/memory cap 512 MiB per tool process; no process cap \(the agent runs as root/) },
        { name: 'workdir', ok: true },
        { name: 'token', ok: true, detail: expect.stringContaining('generated into ') },
      ],
    });
  });

  it('checks the machine outside a project too, with forge.yaml\'s defaults and the current directory as work dir', async () => {
    const here = tempDir('forge-no-project-');
    const { code, stdout, stderr } = await forge(['doctor', '--json'], here, { FORGE_STATE_DIR: tempDir() });
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      ok: true,
      checks: expect.arrayContaining([
        expect.objectContaining({ name: 'limits', detail: expect.stringContaining('memory cap 1 GiB (default)') }),
        expect.objectContaining({ name: 'workdir', detail: expect.stringContaining(here) }),
      ]),
    });
  });

  it('fails where sandbox: required cannot be met', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('sandbox: required\n') });
    const { code, stdout } = await forge(['doctor'], project, { FORGE_STATE_DIR: tempDir(), FORGE_BWRAP: '/bin/false' });
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL {2}isolation {2}none: bubblewrap cannot create namespaces here/m);
  });
});
