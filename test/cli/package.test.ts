/** forge package --json: a failure is one JSON object on stdout, as every command's, not text on stderr and nothing on stdout. */
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, tempDir, writeProject } from '../helpers/project.ts';

describe('forge package --json', () => {
  it('outside a project: the build\'s errors as JSON', async () => {
    const { code, stdout } = await forge(['package', '--json'], tempDir());
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, errors: [{ code: 'FORGE_CONFIG_NOT_FOUND' }] });
  });

  it('a base image it cannot pull: the registry error as JSON', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    const { code, stdout, stderr } = await forge(['package', '--json', '--base', '127.0.0.1:1/node:22', '--out', 'image.tar'], project, { FORGE_CACHE_DIR: tempDir() });
    expect(code, stderr).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, errors: [{ code: 'FORGE_REGISTRY_UNREACHABLE', hint: expect.any(String) }] });
  }, 60_000);
});
