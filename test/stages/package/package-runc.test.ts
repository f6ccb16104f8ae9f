/**
 * `forge package` images started by runc (unpacked by umoci from the
 * loopback registry): /healthz answers from inside the container, tools and
 * their installed packages run there, and the file ownership is right.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runcRun, unpackForRunc, type LoopbackRegistry } from '../../helpers/oci.ts';
import { forge, minimalConfig, tempDir, writeProject } from '../../helpers/project.ts';
import { localWheel, pipFrom } from '../../helpers/python-wheel.ts';
import { FILESYSTEM_PACKAGE, filesystemVersion, npxMcpProject } from '../../helpers/npx-project.ts';

import { callInImage, exitedWithOutput, usePackageFixture, type PackageFixture } from './package-fixture.ts';

const fx = usePackageFixture();
// The fixture's fields under the names the tests use (its beforeAll runs first).
let registry: LoopbackRegistry;
let base: string;
beforeAll(() => {
  ({ registry, base } = fx);
});
const env = () => fx.env();
const packageJson: PackageFixture['packageJson'] = (...args) => fx.packageJson(...args);

describe('forge package, run in runc', () => {
  it('runs in runc: /healthz answers, tools answer, and a tampered runtime.mjs is refused', async () => {
    const reference = `${registry.address}/agents/test-agent:run`;
    await packageJson(['--push', reference]);
    const bundle = unpackForRunc(reference, ['node', '/opt/agent/runtime.mjs', 'serve', '--host', '127.0.0.1', '--port', '0', '--no-auth']);
    const container = runcRun(bundle);
    try {
      const [, url] = await container.waitFor(/listening on (http:\/\/\S+)/);
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      const call = await fetch(`${url}/tools/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'from runc' }) });
      expect(await call.text()).toContain('from runc');
    } finally {
      await container.stop();
    }

    const tampered = unpackForRunc(reference, ['node', '/opt/agent/runtime.mjs', 'serve', '--host', '127.0.0.1', '--port', '0', '--no-auth']);
    appendFileSync(join(tampered, 'rootfs/opt/agent/runtime.mjs'), '\n// changed in the image\n');
    const refused = runcRun(tampered);
    try {
      expect(await exitedWithOutput(refused)).toBe(1);
      expect(refused.output()).toContain('runtime.mjs was changed after the build');
    } finally {
      await refused.stop();
    }
  }, 180_000);

  it('the bundle layer is owned by root and the work dir by the agent user', async () => {
    const reference = `${registry.address}/agents/test-agent:owners`;
    await packageJson(['--push', reference]);
    const bundle = unpackForRunc(reference);
    const rootfs = join(bundle, 'rootfs');
    expect(existsSync(join(rootfs, 'opt/agent/runtime.mjs'))).toBe(true);
    expect(existsSync(join(rootfs, 'opt/agent/test-agent-1.0.0.tgz'))).toBe(false);
    expect(execFileSync('stat', ['-c', '%u:%g %a', join(rootfs, 'workspace')], { encoding: 'utf8' }).trim()).toBe('1000:1000 755');
    expect(execFileSync('stat', ['-c', '%u:%g %a', join(rootfs, 'opt/agent/runtime.mjs')], { encoding: 'utf8' }).trim()).toBe('0:0 644');
  }, 120_000);

  it('installs a Python tool\'s declared package into the image\'s venv, and the tool runs in runc', async () => {
    const wheels = localWheel('forgetiny', '0.1.0', 'def greet(name):\n    return f"hello {name} from forgetiny"\n');
    const python = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/greet.py': '# /// script\n# dependencies = ["forgetiny>=0.1"]\n# ///\n"""\nTool: greet\nDescription: Greets.\nTags: read\n\nInput:\n  name (str): Who.\n"""\nimport forgetiny\n\ndef execute(args):\n    return forgetiny.greet(args["name"])\n',
    });
    const reference = `${registry.address}/agents/python-agent:1`;
    const packaged = await forge(['package', '--base', base, '--push', reference], python, { ...env(), ...pipFrom(wheels) });
    expect(packaged.code, packaged.stderr).toBe(0);
    expect(packaged.stderr).toContain('python: installing forgetiny>=0.1 for Python 3.');
    const config = JSON.parse(execFileSync('skopeo', ['inspect', '--config', '--tls-verify=false', `docker://${reference}`], { encoding: 'utf8' }));
    expect(config.config.Env).toContain('FORGE_PYTHON=/opt/forge-venv/bin/python');
    expect(await callInImage(reference, 'greet', '{"name": "runc"}')).toContain('hello runc from forgetiny');
    // Without a source for the wheel, package stops with a message, not pip's wall of text.
    const offline = await forge(['package', '--base', base, '--out', join(tempDir(), 'x')], python, { ...env(), ...pipFrom(tempDir()) });
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain('pip could not install the Python dependencies for the image: no wheel of forgetiny>=0.1');
    expect(offline.stderr).toContain('PIP_FIND_LINKS');
  }, 240_000);

  it('installs an npx MCP server\'s pinned package in the image, and it answers in a container with no network', async () => {
    const dir = npxMcpProject();
    const reference = `${registry.address}/agents/mcp-agent:1`;
    const packaged = await forge(['package', '--base', base, '--push', reference], dir, env());
    expect(packaged.code, packaged.stderr).toBe(0);
    expect(packaged.stderr).toContain(`mcp: installing ${FILESYSTEM_PACKAGE}@${filesystemVersion()}`);
    expect(await callInImage(reference, 'fs__list_allowed_directories', '{}', { network: false })).toContain('/workspace');
  }, 240_000);
});
