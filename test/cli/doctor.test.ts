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

  it('warns, and says why, when the model key is not set but base_url may need none; fails without base_url', async () => {
    const env = { FORGE_STATE_DIR: tempDir(), OPENAI_API_KEY: '', OPENAI_API_KEY_FILE: '' };
    const local = writeProject({ 'forge.yaml': minimalConfig('model:\n  provider: openai\n  name: llama3\n  base_url: http://127.0.0.1:11434/v1\n') });
    const warned = await forge(['doctor'], local, env);
    expect(warned.code).toBe(0);
    expect(warned.stdout).toMatch(/^warn {2}model key {2}OPENAI_API_KEY is not set \(nor OPENAI_API_KEY_FILE\): the model calls to http:\/\/127\.0\.0\.1:11434\/v1 go without a key$/m);
    expect(warned.stdout).toContain('hint: fine for a server that needs none (Ollama, vLLM); otherwise set OPENAI_API_KEY or OPENAI_API_KEY_FILE');
    expect(warned.stdout).not.toMatch(/^ok .*model key/m);
    expect(JSON.parse((await forge(['doctor', '--json'], local, env)).stdout).checks).toContainEqual(expect.objectContaining({ name: 'model key', ok: true, warning: true }));

    const hosted = writeProject({ 'forge.yaml': minimalConfig('model:\n  provider: openai\n  name: gpt-4o-mini\n') });
    const failed = await forge(['doctor'], hosted, env);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^FAIL {2}model key {2}OPENAI_API_KEY is not set \(nor OPENAI_API_KEY_FILE\)$/m);
    const keyed = await forge(['doctor'], hosted, { ...env, OPENAI_API_KEY: 'sk-test' });
    expect(keyed.stdout).toMatch(/^ok {4}model key {2}OPENAI_API_KEY \(environment\)$/m);
  });

  it('fails where sandbox: required cannot be met', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('sandbox: required\n') });
    const { code, stdout } = await forge(['doctor'], project, { FORGE_STATE_DIR: tempDir(), FORGE_BWRAP: '/bin/false' });
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL {2}isolation {2}none: bubblewrap cannot create namespaces here/m);
  });
});
