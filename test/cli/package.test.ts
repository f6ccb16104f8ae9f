/** forge package --json: a failure is one JSON object on stdout, as every command's, not text on stderr and nothing on stdout. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

  it('a failure keeps what was warned of before it: a FORGE_CACHE_DIR that is a file, then a base it cannot pull', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    const aFile = join(tempDir(), 'cache-file');
    writeFileSync(aFile, 'not a directory\n');
    const { code, stdout, stderr } = await forge(['package', '--json', '--base', '127.0.0.1:1/node:22', '--out', 'image.tar'], project, { FORGE_CACHE_DIR: aFile });
    expect(code, stderr).toBe(1);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_REGISTRY_UNREACHABLE' }, errors: [{ code: 'FORGE_REGISTRY_UNREACHABLE' }], warnings: [{ severity: 'warning', code: 'FORGE_ENV_DIRECTORY', message: expect.stringContaining(`FORGE_CACHE_DIR=${aFile}`) }] });
  }, 60_000);
});
