/**
 * `forge package` and what the tools need from the base: bubblewrap for the
 * tool sandbox (or --no-sandbox, said plainly), an image whose tools are
 * isolated where the container allows bwrap's namespaces (and that says so
 * where it does not), forge.yaml's sandbox mode kept in the image (required
 * refuses --no-sandbox), and the interpreters the tools run (bash:, sh:,
 * python:, Python tools: python3 or python, as the runtime looks) — each
 * missing one an error at its file:line. Real parts: the
 * loopback registry, bases made by umoci, images run by runc.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { pushBaseImage, runcRun, unpackForRunc } from '../../helpers/oci.ts';
import { forge, minimalConfig, tempDir, writeProject } from '../../helpers/project.ts';
import { callInImage, exitedWithOutput, files, usePackageFixture } from './package-fixture.ts';

const fx = usePackageFixture();
const TOKEN = 'package-sandbox-secret-token';

const inspectConfig = (reference: string) => JSON.parse(execFileSync('skopeo', ['inspect', '--config', '--tls-verify=false', `docker://${reference}`], { encoding: 'utf8' }));

/** A Python tool that reads the environment of pid 1: the server's, unless the tool has a PID namespace of its own. */
const environTool = '"""\nTool: pid1_environ\nDescription: Reads /proc/1/environ.\nTags: read\n"""\n\ndef execute(args):\n    try:\n        return open("/proc/1/environ", "rb").read().decode(errors="replace")\n    except OSError as e:\n        return "unreadable: " + str(e)\n';

const serveArgs = ['node', '/opt/agent/runtime.mjs', 'serve', '--host', '127.0.0.1', '--port', '0'];

/** The pushed image sets no FORGE_SANDBOX in its environment, and its dev.forge.sandbox label is `label`. */
function expectSandboxUnsetIn(reference: string, label: string): void {
  const config = inspectConfig(reference);
  expect(config.config.Env.filter((e: string) => e.startsWith('FORGE_SANDBOX='))).toEqual([]);
  expect(config.config.Labels['dev.forge.sandbox']).toBe(label);
}

/** Runs the image where runc refuses bwrap's namespaces, expects it to exit 1 without serving, and gives what it printed. */
async function refusedStart(reference: string, args: string[], env?: Record<string, string>): Promise<string> {
  const container = runcRun(unpackForRunc(reference, args, { sandbox: false, ...(env ? { env } : {}) }));
  try {
    expect(await exitedWithOutput(container)).toBe(1);
    expect(container.output()).not.toContain('listening on');
    return container.output();
  } finally {
    await container.stop();
  }
}

/*
 * The tests run side by side (each packages its own project to its own reference, and most of their time
 * is spent waiting on forge package, the registry and runc): one after the other took 49 s alone.
 */
describe.concurrent('forge package: the tool sandbox', () => {
  /** A base without bubblewrap, pushed once for the tests that use it. */
  let bare: string;
  beforeAll(() => {
    bare = pushBaseImage(fx.registry.address, { python: true, sandbox: false, tag: 'no-bwrap' });
  });

  it('refuses a base without bubblewrap, saying how to get one or how to opt out', async () => {
    const out = join(tempDir(), 'image');
    const result = await forge(['package', '--base', bare, '--out', out], fx.project, fx.env());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`FORGE_PACKAGE_SANDBOX the base image ${bare} cannot run the tool sandbox: it has no bubblewrap`);
    expect(result.stderr).toContain("able to read the agent's token and API keys");
    expect(result.stderr).toMatch(/hint: .*"FROM [^"]+" and "RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap.*--base REGISTRY\/IMAGE.*--no-sandbox/s);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(existsSync(out)).toBe(false);
  }, 240_000);

  it('--no-sandbox packages it anyway, and the image says at start that tools run unsandboxed', async () => {
    const reference = `${fx.registry.address}/agents/unsandboxed:1`;
    // A project of its own: the test before packages fx.project at the same time.
    const packaged = await forge(['package', '--base', bare, '--no-sandbox', '--push', reference], writeProject(files), fx.env());
    expect(packaged.code, packaged.stderr).toBe(0);
    expect(packaged.stderr).toContain('the image runs tools WITHOUT a sandbox (--no-sandbox; FORGE_SANDBOX=off)');
    const config = inspectConfig(reference);
    expect(config.config.Env).toContain('FORGE_SANDBOX=off');
    expect(config.config.Labels['dev.forge.sandbox']).toBe('off');
    const container = runcRun(unpackForRunc(reference, [...serveArgs, '--no-auth']));
    try {
      const [, url] = await container.waitFor(/listening on (http:\/\/\S+)/);
      expect(container.output()).toContain('warning: tool processes run WITHOUT a sandbox: FORGE_SANDBOX=off');
      const ready = (await (await fetch(`${url}/readyz`)).json()) as { sandbox: { isolation: string; mode: string; reason: string } };
      expect(ready.sandbox).toMatchObject({ isolation: 'none', mode: 'off', reason: 'FORGE_SANDBOX=off' });
    } finally {
      await container.stop();
    }
  }, 240_000);

  it('an image isolates its tools in runc; where namespaces are refused it says so, and FORGE_SANDBOX=required refuses to start', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/pid1_environ.py': environTool });
    const reference = `${fx.registry.address}/agents/sandboxed:1`;
    const packaged = await forge(['package', '--base', fx.base, '--push', reference], project, fx.env());
    expect(packaged.code, packaged.stderr).toBe(0);
    expectSandboxUnsetIn(reference, 'auto');

    const container = runcRun(unpackForRunc(reference, serveArgs, { env: { FORGE_AUTH_TOKEN: TOKEN } }));
    try {
      const [, url] = await container.waitFor(/listening on (http:\/\/\S+)/);
      const auth = { authorization: `Bearer ${TOKEN}` };
      const ready = (await (await fetch(`${url}/readyz`, { headers: auth })).json()) as { sandbox: { isolation: string; mode: string } };
      expect(ready.sandbox).toMatchObject({ isolation: 'bubblewrap', mode: 'auto' });
      const call = await fetch(`${url}/tools/pid1_environ`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' });
      const text = await call.text();
      expect(call.status, text).toBe(200);
      expect(text).not.toContain(TOKEN);
    } finally {
      await container.stop();
    }

    // runc's masked /proc refuses bwrap's own /proc, as docker's defaults do: a warning at start and /readyz say so.
    const unisolated = runcRun(unpackForRunc(reference, serveArgs, { sandbox: false, env: { FORGE_AUTH_TOKEN: TOKEN } }));
    try {
      const [, url] = await unisolated.waitFor(/listening on (http:\/\/\S+)/);
      expect(unisolated.output()).toContain('warning: tool processes run WITHOUT a sandbox');
      const ready = (await (await fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { sandbox: { isolation: string } };
      expect(ready.sandbox.isolation).toBe('none');
    } finally {
      await unisolated.stop();
    }
    // Asked to require it, the same container does not start, and names the way out.
    const refused = await refusedStart(reference, serveArgs, { FORGE_AUTH_TOKEN: TOKEN, FORGE_SANDBOX: 'required' });
    expect(refused).toContain('error: FORGE_SANDBOX=required in the environment refuses to run tools without a sandbox, but bubblewrap cannot create namespaces here');
    expect(refused).toMatch(/hint: let the container make namespaces .*FORGE_SANDBOX=auto/);
  }, 240_000);

  it("refuses --no-sandbox when forge.yaml says sandbox: required, before building; the image keeps required (label too)", async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('sandbox: required\n'), 'tools/echo.py': files['tools/echo.py'] });
    const out = join(tempDir(), 'image');
    const refused = await forge(['package', '--base', bare, '--no-sandbox', '--out', out], project, fx.env());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('error: --no-sandbox cannot package this agent: its forge.yaml says sandbox: required');
    expect(refused.stderr).toMatch(/\(drop --no-sandbox and use a base with bubblewrap; or, .* change forge\.yaml's sandbox: to auto or off\)/);
    expect(refused.stderr).toContain('usage: forge package');
    expect(existsSync(out)).toBe(false);
    expect(existsSync(join(project, '.forge-output'))).toBe(false);

    const reference = `${fx.registry.address}/agents/required:1`;
    const packaged = await forge(['package', '--base', fx.base, '--push', reference], project, fx.env());
    expect(packaged.code, packaged.stderr).toBe(0);
    expectSandboxUnsetIn(reference, 'required');
    // A built bundle says the same through its agent.json.
    const fromBundle = await forge(['package', '--bundle', '.forge-output', '--base', fx.base, '--no-sandbox', '--out', out], project, fx.env());
    expect(fromBundle.code).toBe(2);
    expect(fromBundle.stderr).toContain('its forge.yaml says sandbox: required');
    expect(existsSync(out)).toBe(false);
    // Where the container refuses bwrap's namespaces, the image does not start.
    await refusedStart(reference, [...serveArgs, '--no-auth']);
  }, 240_000);

  it("with forge.yaml's sandbox: off, --no-sandbox sets no FORGE_SANDBOX: the image is off by forge.yaml and says so", async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('sandbox: off\n'), 'tools/echo.py': files['tools/echo.py'] });
    const reference = `${fx.registry.address}/agents/off-by-config:1`;
    const packaged = await forge(['package', '--base', bare, '--no-sandbox', '--push', reference], project, fx.env());
    expect(packaged.code, packaged.stderr).toBe(0);
    expect(packaged.stderr).toContain("the image runs tools WITHOUT a sandbox (forge.yaml's sandbox: off)");
    expect(packaged.stderr).not.toContain('FORGE_SANDBOX');
    expectSandboxUnsetIn(reference, 'off');
    const container = runcRun(unpackForRunc(reference, [...serveArgs, '--no-auth']));
    try {
      const [, url] = await container.waitFor(/listening on (http:\/\/\S+)/);
      expect(container.output()).not.toContain('FORGE_SANDBOX=off');
      const ready = (await (await fetch(`${url}/readyz`)).json()) as { sandbox: { isolation: string; mode: string; reason: string } };
      expect(ready.sandbox).toMatchObject({ isolation: 'none', mode: 'off', reason: 'sandbox: off in forge.yaml' });
    } finally {
      await container.stop();
    }
  }, 240_000);
});

describe.concurrent('forge package: the interpreters YAML tools run', () => {
  const yamlTools = {
    'forge.yaml': minimalConfig(),
    'tools/count_lines.yaml': 'description: Counts lines.\ntags: [read]\nparameters:\n  text: { type: string, description: The text. }\nbash: printf "%s" {text} | wc -l\n',
    'tools/steps.yaml': 'description: Two steps.\ntags: [read]\nsteps:\n  - name: greet\n    sh: echo hello\n  - name: shout\n    python: |\n      print("HELLO")\n',
  };

  it('refuses a base without bash, sh or python3 for those steps, each at its file:line; on a base with them the tools run in the image', async () => {
    const nodeOnly = pushBaseImage(fx.registry.address, { python: false, tag: 'node-bwrap' });
    const result = await forge(['package', '--base', nodeOnly, '--out', join(tempDir(), 'x')], writeProject(yamlTools), fx.env());
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/tools\/count_lines\.yaml:5:\d+ FORGE_PACKAGE_INTERPRETER tool "count_lines" runs bash \(its bash: step "main"\), and the base image \S+ has no bash/);
    expect(result.stderr).toMatch(/tools\/steps\.yaml:5:\d+ FORGE_PACKAGE_INTERPRETER tool "steps" runs sh \(its sh: step "greet"\)/);
    expect(result.stderr).toMatch(/tools\/steps\.yaml:7:\d+ FORGE_PACKAGE_INTERPRETER tool "steps" runs python3 or python \(its python: step "shout"\), and the base image \S+ has no python3 or python/);
    expect(result.stderr).toMatch(/hint: use a base that has it: a Dockerfile "FROM \S+" that installs it \(apt-get install -y bash\)/);
    expect(result.stderr).toContain('(apt-get install -y dash)');

    const withShells = pushBaseImage(fx.registry.address, { python: true, shells: true, tag: 'shells' });
    const reference = `${fx.registry.address}/agents/yaml-tools:1`;
    const packaged = await forge(['package', '--base', withShells, '--push', reference], writeProject(yamlTools), fx.env());
    expect(packaged.code, packaged.stderr).toBe(0);
    expect(await callInImage(reference, 'steps')).toContain('HELLO');
  }, 240_000);

  it('takes python where the base has no python3, for Python tools and python: steps, as the runtime does', async () => {
    const pythonOnly = pushBaseImage(fx.registry.address, { python: true, pythonLink: 'python', tag: 'python-only' });
    const project = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/echo.py': files['tools/echo.py'],
      'tools/shout.yaml': 'description: Shouts in Python.\ntags: [read]\nsteps:\n  - name: shout\n    python: |\n      print("HELLO")\n',
    });
    const reference = `${fx.registry.address}/agents/python-only:1`;
    const packaged = await forge(['package', '--base', pythonOnly, '--push', reference], project, fx.env());
    expect(packaged.code, packaged.stderr).toBe(0);
    expect(await callInImage(reference, 'echo', '{"message": "from python"}')).toContain('from python');
    expect(await callInImage(reference, 'shout')).toContain('HELLO');
  }, 240_000);
});
