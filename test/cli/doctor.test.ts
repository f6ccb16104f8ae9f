import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, runProcess, tempDir, writeProject } from '../helpers/project.ts';

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
      warnings: [],
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

  it('warns, and says why, when the model key is not set but base_url may need none', async () => {
    const env = { FORGE_STATE_DIR: tempDir(), OPENAI_API_KEY: '', OPENAI_API_KEY_FILE: '' };
    const local = writeProject({ 'forge.yaml': minimalConfig('model:\n  provider: openai\n  name: llama3\n  base_url: http://127.0.0.1:11434/v1\n') });
    const warned = await forge(['doctor'], local, env);
    expect(warned.code).toBe(0);
    expect(warned.stdout).toMatch(/^warn {2}model key {2}OPENAI_API_KEY is not set \(nor OPENAI_API_KEY_FILE\): the model calls to http:\/\/127\.0\.0\.1:11434\/v1 go without a key$/m);
    expect(warned.stdout).toContain('hint: fine for a server that needs none (Ollama, vLLM); otherwise set OPENAI_API_KEY or OPENAI_API_KEY_FILE');
    expect(warned.stdout).not.toMatch(/^ok .*model key/m);
    expect(JSON.parse((await forge(['doctor', '--json'], local, env)).stdout).checks).toContainEqual(expect.objectContaining({ name: 'model key', ok: true, warning: true }));
  });

  it('a model key not set is a warning for forge doctor, where the project is worked on, and a failure for the bundle\'s doctor, where it is deployed; the exit code follows the line', async () => {
    const env = { FORGE_STATE_DIR: tempDir(), OPENAI_API_KEY: '', OPENAI_API_KEY_FILE: '' };
    const hosted = writeProject({ 'forge.yaml': minimalConfig('model:\n  provider: openai\n  name: gpt-4o-mini\n') });
    const here = await forge(['doctor'], hosted, env);
    expect(here.code, here.stdout).toBe(0);
    expect(here.stdout).toMatch(/^warn {2}model key {2}OPENAI_API_KEY is not set \(nor OPENAI_API_KEY_FILE\): forge chat refuses to start, and the agent answers every message with an error; its tools run without it$/m);
    expect(here.stdout).toContain('FORGE_MODEL_KEY');
    expect(here.stdout).toContain('where the agent is deployed, its doctor (node runtime.mjs doctor) fails without it');
    expect(here.stdout).not.toMatch(/^FAIL/m);
    // --json: ok, the check a warning with the code forge chat refuses with.
    const json = JSON.parse((await forge(['doctor', '--json'], hosted, env)).stdout);
    expect(json.ok).toBe(true);
    expect(json.checks).toContainEqual(expect.objectContaining({ name: 'model key', ok: true, warning: true, code: 'FORGE_MODEL_KEY' }));
    // And in `warnings`, where every command's --json puts what its text mode warns of.
    expect(json.warnings).toEqual([expect.objectContaining({ severity: 'warning', code: 'FORGE_MODEL_KEY', message: expect.stringMatching(/^model key: OPENAI_API_KEY is not set/), hint: expect.stringContaining('OPENAI_API_KEY_FILE') })]);

    expect((await forge(['build'], hosted, env)).code).toBe(0);
    const bundleDoctor = (args: string[], extra: NodeJS.ProcessEnv = {}) => runProcess(process.execPath, [join(hosted, '.forge-output', 'runtime.mjs'), 'doctor', ...args], { cwd: hosted, env: { ...env, ...extra } });
    const deployed = await bundleDoctor([]);
    expect(deployed.code).toBe(1);
    expect(deployed.stdout).toMatch(/^FAIL {2}model key {2}OPENAI_API_KEY is not set \(nor OPENAI_API_KEY_FILE\): the agent answers every message with an error$/m);
    expect(JSON.parse((await bundleDoctor(['--json'])).stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_MODEL_KEY' } });

    const keyed = await forge(['doctor'], hosted, { ...env, OPENAI_API_KEY: 'sk-test' });
    expect(keyed.stdout).toMatch(/^ok {4}model key {2}OPENAI_API_KEY \(environment\)$/m);
    expect((await bundleDoctor([], { OPENAI_API_KEY: 'sk-test' })).code).toBe(0);
  });

  it("checks the key of each of model.fallbacks, as serve warns of each: one missing beside a model that can answer is a warning, in the bundle's doctor too", async () => {
    const env = { FORGE_STATE_DIR: tempDir(), OPENAI_API_KEY: 'sk-test', OPENAI_API_KEY_FILE: '', ANTHROPIC_API_KEY: '', ANTHROPIC_API_KEY_FILE: '' };
    const project = writeProject({ 'forge.yaml': minimalConfig('model:\n  provider: openai\n  name: gpt-4o-mini\n  fallbacks:\n    - provider: anthropic\n      name: claude-sonnet-4\n') });
    expect((await forge(['build'], project, env)).code).toBe(0);
    const bundleDoctor = (extra: NodeJS.ProcessEnv = {}) => runProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'doctor'], { cwd: project, env: { ...env, ...extra } });
    const fallbackMissing = await bundleDoctor();
    expect(fallbackMissing.code, fallbackMissing.stdout).toBe(0);
    expect(fallbackMissing.stdout).toMatch(/^ok {4}model key {2}model openai:gpt-4o-mini: OPENAI_API_KEY \(environment\)$/m);
    expect(fallbackMissing.stdout).toMatch(/^warn {2}model key {2}fallback 1 anthropic:claude-sonnet-4: ANTHROPIC_API_KEY is not set \(nor ANTHROPIC_API_KEY_FILE\): calls to it fail, and the agent goes on to another model of the chain$/m);
    // The bundle's doctor --json that passes carries its warn line in `warnings` too.
    const json = await runProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'doctor', '--json'], { cwd: project, env });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, warnings: [{ severity: 'warning', message: expect.stringMatching(/^model key: fallback 1 anthropic:claude-sonnet-4: ANTHROPIC_API_KEY is not set/) }] });
    // No model left that can answer: every message fails.
    const none = await bundleDoctor({ OPENAI_API_KEY: '' });
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/^FAIL {2}model key {2}fallback 1 anthropic:claude-sonnet-4: ANTHROPIC_API_KEY is not set/m);
  });

  it('fails on a model key file that is not there, in forge doctor too: the agent refuses to start on it', async () => {
    const env = { FORGE_STATE_DIR: tempDir(), OPENAI_API_KEY: '', OPENAI_API_KEY_FILE: join(tempDir(), 'no-key') };
    const hosted = writeProject({ 'forge.yaml': minimalConfig('model:\n  provider: openai\n  name: gpt-4o-mini\n') });
    const { code, stdout } = await forge(['doctor'], hosted, env);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL {2}model key {2}OPENAI_API_KEY_FILE names .*no-key, which cannot be read: there is no such file; the agent refuses to start$/m);
  });

  // They passed doctor when they existed at all (a directory, an empty file) and stopped the start; the token file's
  // failure had neither its reason nor a hint, under FORGE_DOCTOR_CHECK.
  it.each([
    ['a directory', (dir: string) => dir, 'which cannot be read: it is a directory'],
    ['empty', (dir: string) => join(dir, 'empty'), 'which is empty'],
    ['not there', (dir: string) => join(dir, 'nothing'), 'which cannot be read: there is no such file'],
  ])('reads the token file and the model key file as the agent does at start: one that is %s fails, with the code, words and hint the agent refuses with', async (_, named, why) => {
    const dir = tempDir();
    writeFileSync(join(dir, 'empty'), '\n');
    const file = named(dir);
    const env = { FORGE_STATE_DIR: tempDir(), FORGE_AUTH_TOKEN: '', FORGE_AUTH_TOKEN_FILE: file, OPENAI_API_KEY: '', OPENAI_API_KEY_FILE: file };
    const hosted = writeProject({ 'forge.yaml': minimalConfig('model:\n  provider: openai\n  name: gpt-4o-mini\n') });
    const { code, stdout } = await forge(['doctor'], hosted, env);
    expect(code).toBe(1);
    expect(stdout).toContain(`FAIL  token      FORGE_AUTH_TOKEN_FILE names ${file}, ${why}; the agent refuses to start\n                 FORGE_SERVE_CONFIG\n                 hint: `);
    expect(stdout).toContain(`FAIL  model key  OPENAI_API_KEY_FILE names ${file}, ${why}; the agent refuses to start\n                 FORGE_MODEL_KEY\n                 hint: `);
    const json = JSON.parse((await forge(['doctor', '--json'], hosted, env)).stdout);
    expect(json.errors).toEqual([
      expect.objectContaining({ code: 'FORGE_SERVE_CONFIG', message: `token: FORGE_AUTH_TOKEN_FILE names ${file}, ${why}; the agent refuses to start`, hint: expect.stringContaining('set FORGE_AUTH_TOKEN instead') }),
      expect.objectContaining({ code: 'FORGE_MODEL_KEY', message: `model key: OPENAI_API_KEY_FILE names ${file}, ${why}; the agent refuses to start`, hint: expect.stringContaining('unset OPENAI_API_KEY_FILE and set OPENAI_API_KEY') }),
    ]);
    // FORGE_AUTH_TOKEN wins over the file, in serve and here.
    const tokenSet = await forge(['doctor'], hosted, { ...env, FORGE_AUTH_TOKEN: 'a-token' });
    expect(tokenSet.stdout).toMatch(/^ok {4}token {6}FORGE_AUTH_TOKEN \(environment\)$/m);
  });

  // It said "generated into … at the first start", and the start then refused: replicas on one store must share a token.
  it.each([
    ['FORGE_STATE_URL', '', { FORGE_STATE_URL: 'postgres://forge@127.0.0.1:1/forge' }],
    ["forge.yaml's state:", 'state: postgresql://forge@127.0.0.1:1/forge\n', {}],
  ])('fails the token check where a shared store (%s) has no token for every replica, as serve refuses to start', async (_, yaml, stateEnv) => {
    const project = writeProject({ 'forge.yaml': minimalConfig(yaml) });
    const env = { FORGE_STATE_DIR: tempDir(), FORGE_AUTH_TOKEN: '', FORGE_AUTH_TOKEN_FILE: '', ...stateEnv };
    const { code, stdout } = await forge(['doctor', '--json'], project, env);
    expect(code).toBe(1);
    expect(JSON.parse(stdout).errors).toEqual([
      expect.objectContaining({ code: 'FORGE_SERVE_CONFIG', message: expect.stringMatching(/^token: a shared state store \(FORGE_STATE_URL\) needs one token for every replica.*; the agent refuses to start$/), hint: expect.stringContaining('give every replica the same token') }),
    ]);
    const tokenSet = await forge(['doctor'], project, { ...env, FORGE_AUTH_TOKEN: 'a-token' });
    expect(tokenSet.code).toBe(0);
    expect(tokenSet.stdout).toMatch(/^ok {4}token {6}FORGE_AUTH_TOKEN \(environment\)$/m);
  });

  it("carries forge.yaml's warnings, which text mode prints on stderr, in --json's `warnings`, whether it passes or fails", async () => {
    const project = writeProject({ 'forge.yaml': `%YAML 1.3\n---\n${minimalConfig('sandbox: required\n')}` });
    const env = { FORGE_STATE_DIR: tempDir() };
    const text = await forge(['doctor'], project, env);
    expect(text.code).toBe(0);
    expect(text.stderr).toContain('forge.yaml:1:7 FORGE_YAML_WARNING Unsupported YAML version 1.3');
    const yamlWarning = expect.objectContaining({ severity: 'warning', code: 'FORGE_YAML_WARNING', file: 'forge.yaml', line: 1, column: 7 });
    const passed = await forge(['doctor', '--json'], project, env);
    expect(passed.code).toBe(0);
    expect(JSON.parse(passed.stdout)).toMatchObject({ ok: true, warnings: [yamlWarning] });
    // sandbox: required where bubblewrap cannot run: a doctor that fails, in the shape every failed command has.
    const failed = await forge(['doctor', '--json'], project, { ...env, FORGE_BWRAP: '/bin/false' });
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_SANDBOX_REQUIRED' }, warnings: [yamlWarning] });
  });

  it('fails where sandbox: required cannot be met', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('sandbox: required\n') });
    const { code, stdout } = await forge(['doctor'], project, { FORGE_STATE_DIR: tempDir(), FORGE_BWRAP: '/bin/false' });
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL {2}isolation {2}none: bubblewrap cannot create namespaces here/m);
  });

  it("checks forge.yaml's MCP servers before a build, as the bundle's doctor does: a secret not set and a stdio command not there, each with its code, hint and place in forge.yaml", async () => {
    // minimalConfig is 3 lines: mcp: is line 4, the header's ${VAR} line 10 (column 24), the command line 13 (column 16).
    const servers = (command: string) => minimalConfig(
      'mcp:\n' +
      '  servers:\n' +
      '    - name: docs\n' +
      '      transport: http\n' +
      '      url: https://docs.example.invalid/mcp\n' +
      '      headers:\n' +
      '        Authorization: Bearer ${FORGE_DOCTOR_TEST_DOCS_TOKEN}\n' +
      '    - name: notes\n' +
      '      transport: stdio\n' +
      `      command: ${command}\n`,
    );
    const env = { FORGE_STATE_DIR: tempDir() };
    const broken = writeProject({ 'forge.yaml': servers('forge-doctor-test-no-such-server') });
    const text = await forge(['doctor'], broken, env);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toMatch(/^FAIL {2}mcp docs +FORGE_DOCTOR_TEST_DOCS_TOKEN is not set \(used in mcp\.servers\[docs\]\.headers\.Authorization\): the server does not connect and the agent does not start\n +forge\.yaml:10:24 FORGE_MCP_CONNECT\n +hint: set FORGE_DOCTOR_TEST_DOCS_TOKEN in the environment the agent runs in$/m);
    expect(text.stdout).toMatch(/^FAIL {2}mcp notes +command "forge-doctor-test-no-such-server" is not found on PATH: the server does not connect and the agent does not start\n +forge\.yaml:13:16 FORGE_MCP_CONNECT\n +hint: install forge-doctor-test-no-such-server on this machine, or change mcp\.servers\[notes\]\.command in forge\.yaml$/m);
    const json = await forge(['doctor', '--json'], broken, env);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout);
    expect(report.ok).toBe(false);
    expect(report.checks).toContainEqual({
      name: 'mcp docs', ok: false, code: 'FORGE_MCP_CONNECT', file: 'forge.yaml', line: 10, column: 24,
      detail: 'FORGE_DOCTOR_TEST_DOCS_TOKEN is not set (used in mcp.servers[docs].headers.Authorization): the server does not connect and the agent does not start',
      hint: 'set FORGE_DOCTOR_TEST_DOCS_TOKEN in the environment the agent runs in',
    });
    expect(report.checks).toContainEqual(expect.objectContaining({ name: 'mcp notes', ok: false, code: 'FORGE_MCP_CONNECT', file: 'forge.yaml', line: 13, column: 16 }));

    // The secret set and a command that is there (a server that would leave a mark if doctor started it): no problem, and nothing started.
    const fine = writeProject({ 'forge.yaml': servers('./server.sh') });
    const mark = join(fine, 'started');
    writeFileSync(join(fine, 'server.sh'), `#!/bin/sh\ntouch '${mark}'\n`);
    chmodSync(join(fine, 'server.sh'), 0o755);
    const ok = await forge(['doctor'], fine, { ...env, FORGE_DOCTOR_TEST_DOCS_TOKEN: 'secret-token' });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^ok {4}mcp docs +http: every variable it names is set$/m);
    expect(ok.stdout).toMatch(new RegExp(`^ok {4}mcp notes +stdio: ${join(fine, 'server.sh').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'));
    expect(ok.stdout).not.toMatch(/FAIL|FORGE_MCP/);
    expect(ok.stdout + ok.stderr).not.toContain('secret-token');
    expect(existsSync(mark), 'doctor started the stdio server').toBe(false);
  });

  it("never prints a variable's value: a stdio command that names one is shown as forge.yaml writes it", async () => {
    const SECRET = 'sk-doctor-test-secret-value';
    const config = (command: string) => minimalConfig(`mcp:\n  servers:\n    - name: notes\n      transport: stdio\n      command: ${JSON.stringify(command)}\n`);
    const env = { FORGE_STATE_DIR: tempDir(), FORGE_DOCTOR_TEST_SECRET: SECRET };
    const missing = writeProject({ 'forge.yaml': config('${FORGE_DOCTOR_TEST_SECRET}-server') });
    for (const args of [['doctor'], ['doctor', '--json']]) {
      const run = await forge(args, missing, env);
      expect(run.code).toBe(1);
      expect(run.stdout + run.stderr).not.toContain(SECRET);
      expect(run.stdout).toContain('${FORGE_DOCTOR_TEST_SECRET}-server');
    }
    // A command that is there, its path made with the variable.
    const there = writeProject({ 'forge.yaml': config('./${FORGE_DOCTOR_TEST_SECRET}.sh') });
    writeFileSync(join(there, `${SECRET}.sh`), '#!/bin/sh\n');
    chmodSync(join(there, `${SECRET}.sh`), 0o755);
    const found = await forge(['doctor'], there, env);
    expect(found.code, found.stdout + found.stderr).toBe(0);
    expect(found.stdout + found.stderr).not.toContain(SECRET);
    expect(found.stdout).toMatch(/^ok {4}mcp notes +stdio: \.\/\$\{FORGE_DOCTOR_TEST_SECRET\}\.sh \(found\)$/m);
  });
});
