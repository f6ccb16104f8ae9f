/**
 * `forge package` against real parts: Debian's docker-registry on loopback,
 * a base image assembled with umoci and pushed with skopeo, and the image
 * forge pushes, inspected and copied by skopeo (package-runc.test.ts starts
 * the images in runc).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CODE_CACHE_DIR } from '../../../runtime/core-loader.ts';
import { pushBaseImage, startRegistry, type LoopbackRegistry } from '../../helpers/oci.ts';
import { forge, forgeBin, minimalConfig, runProcess, tempDir, writeProject } from '../../helpers/project.ts';
import { startTokenService } from '../../helpers/registry-token-server.ts';
import { startServer } from '../../helpers/http-server.ts';
import { localWheel } from '../../helpers/python-wheel.ts';
import { files, usePackageFixture, type PackageFixture } from './package-fixture.ts';

const fx = usePackageFixture();
// The fixture's fields under the names the tests use (its beforeAll runs first).
let registry: LoopbackRegistry;
let base: string;
let project: string;
beforeAll(() => {
  ({ registry, base, project } = fx);
});
const env = () => fx.env();
const packageJson: PackageFixture['packageJson'] = (...args) => fx.packageJson(...args);

describe('forge package', () => {
  it('pushes an image that skopeo inspects with the agent\'s config and labels', async () => {
    const pushed = await packageJson(['--push', `${registry.address}/agents/test-agent:1.0.0`]);
    expect(pushed.digest).toMatch(/^sha256:[a-f0-9]{64}$/);
    expect(pushed.base.from).toBe('registry');
    const inspect = JSON.parse(execFileSync('skopeo', ['inspect', '--tls-verify=false', `docker://${registry.address}/agents/test-agent:1.0.0`], { encoding: 'utf8' }));
    expect(inspect.Digest).toBe(pushed.digest);
    expect(inspect.Labels['org.opencontainers.image.title']).toBe('test-agent');
    expect(inspect.Labels['org.opencontainers.image.base.digest']).toBe(pushed.base.digest);
    const buildManifest = readFileSync(join(project, '.forge-output', 'build-manifest.json'));
    const { createHash } = await import('node:crypto');
    expect(inspect.Labels['dev.forge.build-manifest.digest']).toBe(`sha256:${createHash('sha256').update(buildManifest).digest('hex')}`);
    const config = JSON.parse(execFileSync('skopeo', ['inspect', '--config', '--tls-verify=false', `docker://${registry.address}/agents/test-agent:1.0.0`], { encoding: 'utf8' }));
    expect(config.config.User).toBe('1000:1000');
    expect(config.config.WorkingDir).toBe('/workspace');
    expect(config.config.Entrypoint).toEqual(['node', '/opt/agent/runtime.mjs']);
    expect(config.config.Env).toEqual(expect.arrayContaining(['NODE_ENV=production', 'FORGE_WORKDIR=/workspace', 'PATH=/usr/local/bin:/usr/bin:/bin']));
  }, 120_000);

  it("--json: one document on stdout with the warnings text mode prints on stderr; a FORGE_CACHE_DIR that is a file is one, and the base is pulled into a temporary cache", async () => {
    const plain = (await packageJson(['--out', join(tempDir(), 'plain')])) as unknown as { warnings: unknown[] };
    expect(plain.warnings).toEqual([]);
    const aFile = join(tempDir(), 'cache-file');
    writeFileSync(aFile, 'not a directory\n');
    const result = await forge(['package', '--base', base, '--json', '--no-sandbox', '--out', join(tempDir(), 'unsandboxed')], project, { FORGE_CACHE_DIR: aFile });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const doc = JSON.parse(result.stdout);
    expect(doc).toMatchObject({ ok: true, sandbox: 'off', base: { from: 'registry' } });
    expect(doc.warnings).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'FORGE_ENV_DIRECTORY', message: expect.stringMatching(new RegExp(`^FORGE_CACHE_DIR=${aFile} is a file, not a directory: .*temporary cache`)), hint: expect.any(String) }),
      expect.objectContaining({ severity: 'warning', code: 'FORGE_IMAGE_UNSANDBOXED', message: expect.stringContaining('WITHOUT a sandbox (--no-sandbox; FORGE_SANDBOX=off)') }),
    ]);
  }, 180_000);

  // It failed with Node's "EACCES: permission denied, mkdir ..." as FORGE_INTERNAL once it pulled the base.
  it('a FORGE_CACHE_DIR this user cannot write is warned of, and the base is pulled into a temporary cache', async () => {
    const own = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    const home = tempDir('forge-nobody-home-');
    execFileSync('chown', ['-R', 'nobody:nogroup', own, home]);
    const readOnly = tempDir('forge-not-writable-');
    chmodSync(readOnly, 0o755);
    const asNobody = ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, forgeBin];
    const result = await runProcess('setpriv', [...asNobody, 'package', '--base', base, '--json', '--out', join(own, 'image.tar')], { cwd: own, env: { HOME: home, FORGE_CACHE_DIR: readOnly } });
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(result.stderr).toBe('');
    const doc = JSON.parse(result.stdout);
    expect(doc).toMatchObject({ ok: true, base: { from: 'registry' } });
    expect(doc.warnings).toEqual([expect.objectContaining({ severity: 'warning', code: 'FORGE_ENV_DIRECTORY', message: `FORGE_CACHE_DIR=${readOnly} cannot be written: ${readOnly} is not writable by this user (EACCES): nothing is kept in Forge's machine-wide cache: the base image is read from it where it holds it, the rest pulled into a temporary cache` })]);
    expect(readdirSync(readOnly)).toEqual([]);
  }, 180_000);

  /** The base image copied into a registry of its own, which a test may stop. */
  async function baseInARegistryOfItsOwn() {
    const registry = await startRegistry();
    const moved = `${registry.address}/base:1`;
    execFileSync('skopeo', ['copy', '--quiet', '--src-tls-verify=false', '--dest-tls-verify=false', `docker://${base}`, `docker://${moved}`]);
    return { registry, moved };
  }

  /** A cache filled by a package as root from a registry of its own, then made read-only for others; the registry still up. */
  async function seededCache() {
    const { registry, moved } = await baseInARegistryOfItsOwn();
    const dir = tempDir('forge-seeded-cache-');
    const online = await forge(['package', '--base', moved, '--json', '--out', join(tempDir(), 'online')], project, { FORGE_CACHE_DIR: dir });
    expect(online.code, online.stderr).toBe(0);
    execFileSync('chmod', ['-R', 'a+rX,go-w', dir]);
    return { registry, moved, dir, digest: JSON.parse(online.stdout).digest as string };
  }
  /** forge package as nobody, with FORGE_CACHE_DIR=`cache`. */
  function packageAsNobody(args: string[], cache: string) {
    const own = writeProject(files);
    const home = tempDir('forge-nobody-home-');
    execFileSync('chown', ['-R', 'nobody:nogroup', own, home]);
    const asNobody = ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, forgeBin];
    return runProcess('setpriv', [...asNobody, 'package', ...args, '--out', join(own, 'image.tar')], { cwd: own, env: { HOME: home, FORGE_CACHE_DIR: cache } });
  }

  // A CI runner with a pre-seeded cache it cannot write: the cache was set aside for a temporary one, so the base
  // it held was pulled again, and with the registry away (--offline) nothing could be packaged.
  it('works offline from a FORGE_CACHE_DIR this user can read but not write, pre-seeded with the base', async () => {
    const seeded = await seededCache();
    await seeded.registry.stop();
    const seededFiles = execFileSync('find', [seeded.dir], { encoding: 'utf8' });
    const offline = await packageAsNobody(['--offline', '--base', seeded.moved], seeded.dir);
    expect(offline.code, offline.stderr + offline.stdout).toBe(0);
    expect(offline.stderr).toContain(`FORGE_CACHE_DIR=${seeded.dir} cannot be written`);
    expect(offline.stderr).toContain('from the cache: the registry did not answer');
    expect(offline.stdout).toContain(seeded.digest);
    expect(execFileSync('find', [seeded.dir], { encoding: 'utf8' })).toBe(seededFiles);
  }, 240_000);

  it('pulls again, into the temporary cache, a blob of that read-only cache this user cannot read', async () => {
    const seeded = await seededCache();
    try {
      const blobs = join(seeded.dir, 'blobs', 'sha256');
      const largest = readdirSync(blobs).sort((a, b) => statSync(join(blobs, b)).size - statSync(join(blobs, a)).size)[0];
      chmodSync(join(blobs, largest), 0o600);
      const result = await packageAsNobody(['--base', seeded.moved], seeded.dir);
      expect(result.code, result.stderr + result.stdout).toBe(0);
      expect(result.stdout).toContain(seeded.digest);
    } finally {
      await seeded.registry.stop();
    }
  }, 240_000);

  it('gives the same digest for the same input, by push, OCI layout and OCI archive', async () => {
    const first = await packageJson(['--push', `${registry.address}/agents/test-agent:again`]);
    // A run of the bundle here writes the runtime's code cache into the output: this machine's, and no part of the image.
    execFileSync(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'help'], { cwd: project, stdio: 'ignore' });
    const codeCache = join(project, '.forge-output', CODE_CACHE_DIR);
    expect(readdirSync(codeCache)).toHaveLength(1);
    const layout = join(tempDir(), 'image');
    const second = await packageJson(['--out', layout]);
    const archive = join(tempDir(), 'image.tar');
    const third = await packageJson(['--out', archive]);
    expect(second.digest).toBe(first.digest);
    expect(third.digest).toBe(first.digest);
    expect(readdirSync(codeCache)).toHaveLength(1); // still there: the digests agree with it beside the bundle
    expect(JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')).manifests[0].digest).toBe(first.digest);
    // skopeo reads both outputs and agrees on the digest.
    expect(JSON.parse(execFileSync('skopeo', ['inspect', `oci:${layout}`], { encoding: 'utf8' })).Digest).toBe(first.digest);
    expect(JSON.parse(execFileSync('skopeo', ['inspect', `oci-archive:${archive}`], { encoding: 'utf8' })).Digest).toBe(first.digest);
    // A changed tool changes the digest.
    const changed = writeProject({ ...files, 'tools/echo.py': files['tools/echo.py'].replace('Echo a message.', 'Echo a message back.') });
    expect((await packageJson(['--out', join(tempDir(), 'changed')], changed)).digest).not.toBe(first.digest);
  }, 180_000);

  it('builds on forge.yaml\'s runtime.image when no --base is given, as the Dockerfile does', async () => {
    const pinned = writeProject({ ...files, 'forge.yaml': minimalConfig(`runtime: { node: 24, image: "${base}" }\ntools:\n  - uuid_generate\n`) });
    const result = await forge(['package', '--json', '--out', join(tempDir(), 'from-runtime')], pinned, env());
    expect(result.code, result.stderr + result.stdout).toBe(0);
    const fromConfig = JSON.parse(result.stdout) as { base: { digest: string } };
    expect(fromConfig.base.digest).toBe((await packageJson(['--out', join(tempDir(), 'explicit')])).base.digest);
    expect(readFileSync(join(pinned, '.forge-output', 'Dockerfile'), 'utf8')).toContain(`FROM ${base}`);
  }, 120_000);

  it('works offline once the base is cached, and says so', async () => {
    const { registry: second, moved } = await baseInARegistryOfItsOwn();
    const cache = tempDir('forge-cache-');
    const online = await forge(['package', '--base', moved, '--json', '--out', join(tempDir(), 'online')], project, { FORGE_CACHE_DIR: cache });
    expect(online.code, online.stderr).toBe(0);
    await second.stop();
    const offline = await forge(['package', '--base', moved, '--out', join(tempDir(), 'offline')], project, { FORGE_CACHE_DIR: cache });
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toContain('from the cache: the registry did not answer');
    expect(offline.stdout).toContain(JSON.parse(online.stdout).digest);
    const uncached = await forge(['package', '--base', moved, '--out', join(tempDir(), 'x')], project, { FORGE_CACHE_DIR: tempDir('forge-cache-') });
    expect(uncached.code).toBe(1);
    expect(uncached.stderr).toContain(`cannot reach ${second.address}`);
  }, 120_000);

  it('refuses a Python dependency when the base image has no Python, naming the ways out', async () => {
    const nodeOnly = pushBaseImage(registry.address, { python: false, tag: 'node-only' });
    const python = writeProject({ 'forge.yaml': minimalConfig(), 'requirements.txt': 'forgetiny\n', 'tools/hi.py': '"""\nTool: hi\nDescription: Hi.\nTags: read\n"""\ndef execute(args):\n    return "hi"\n' });
    const result = await forge(['package', '--base', nodeOnly, '--out', join(tempDir(), 'x')], python, env());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the base image has no Python');
    expect(result.stderr).toContain('build the Dockerfile in the bundle with docker, podman or buildah');
  }, 240_000);

  it("starts pip for the venv layer with Forge's quick retries, so an unreachable index fails fast", async () => {
    // A python that answers the interpreter lookup as itself and, started as pip, says what it was given.
    const bin = tempDir('forge-fake-python-');
    const fake = join(bin, 'python3');
    writeFileSync(fake, `#!/bin/sh\ncase "$2" in *sys.executable*) printf '%s' "$0"; exit 0;; esac\nif [ "$1 $2" = "-m pip" ]; then echo "pip saw PIP_RETRIES=$PIP_RETRIES PIP_DEFAULT_TIMEOUT=$PIP_DEFAULT_TIMEOUT" >&2; exit 1; fi\nexec python3 "$@"\n`, { mode: 0o755 });
    const python = writeProject({ 'forge.yaml': minimalConfig(), 'requirements.txt': 'forgetiny\n', 'tools/hi.py': '"""\nTool: hi\nDescription: Hi.\nTags: read\n"""\ndef execute(args):\n    return "hi"\n' });
    const result = await forge(['package', '--base', base, '--out', join(tempDir(), 'x')], python, { ...env(), FORGE_PYTHON: fake, PIP_RETRIES: '', PIP_TIMEOUT: '', PIP_DEFAULT_TIMEOUT: '' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('pip saw PIP_RETRIES=1 PIP_DEFAULT_TIMEOUT=15');
  }, 240_000);

  it('pushes to a registry that wants a Bearer token, fetching it with the credentials', async () => {
    const tokens = await startTokenService('forge', 's3cret');
    const guarded = await startRegistry({ token: tokens });
    try {
      const reference = `${guarded.address}/agents/test-agent:1`;
      const anonymous = await forge(['package', '--base', base, '--push', reference], project, env());
      expect(anonymous.code).toBe(1);
      expect(anonymous.stderr).toMatch(/a token from http:\/\/127\.0\.0\.1:\d+: HTTP 401 \(UNAUTHORIZED: bad credentials\)/);
      const wrong = await forge(['package', '--base', base, '--push', reference], project, { ...env(), FORGE_REGISTRY_USER: 'forge', FORGE_REGISTRY_PASSWORD: 'nope' });
      expect(wrong.code).toBe(1);
      const pushed = await forge(['package', '--base', base, '--push', reference, '--json'], project, { ...env(), FORGE_REGISTRY_USER: 'forge', FORGE_REGISTRY_PASSWORD: 's3cret' });
      expect(pushed.code, pushed.stderr).toBe(0);
      expect(tokens.issued()).toBeGreaterThan(0);
      // Asynchronously: the token service answers skopeo from this process.
      const inspected = await runProcess('skopeo', ['inspect', '--tls-verify=false', '--creds', 'forge:s3cret', `docker://${reference}`], { cwd: project });
      expect(inspected.code, inspected.stderr).toBe(0);
      expect(JSON.parse(inspected.stdout).Digest).toBe(JSON.parse(pushed.stdout).digest);
    } finally {
      await guarded.stop();
    }
  }, 180_000);
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('forge package: what stops it is a coded diagnostic with a way out, not a crash', () => {
  const noCrash = (stderr: string) => {
    expect(stderr).not.toContain('stack trace');
    expect(stderr).not.toMatch(/^\s+at /m);
  };

  it('a registry that cannot be reached', async () => {
    const address = `127.0.0.1:${await closedPort()}`;
    const result = await forge(['package', '--base', `${address}/base:1`, '--out', join(tempDir(), 'x')], project, { FORGE_CACHE_DIR: tempDir('forge-cache-') });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`FORGE_REGISTRY_UNREACHABLE cannot reach ${address}`);
    expect(result.stderr).toMatch(/hint: .*--base IMAGE or FORGE_BASE_IMAGE/);
    noCrash(result.stderr);
  }, 120_000);

  it('--load with no docker or podman answering, said before anything is built, pulled or installed', async () => {
    // A docker and a podman on PATH whose daemons are down, as `docker info` says then.
    const bin = tempDir('forge-no-engine-');
    for (const engine of ['docker', 'podman']) writeFileSync(join(bin, engine), '#!/bin/sh\necho "Cannot connect to the daemon" >&2\nexit 1\n', { mode: 0o755 });
    const fresh = writeProject({ 'forge.yaml': minimalConfig(), 'requirements.txt': 'forgetiny\n', 'tools/hi.py': '"""\nTool: hi\nDescription: Hi.\nTags: read\n"""\ndef execute(args):\n    return "hi"\n' });
    const address = `127.0.0.1:${await closedPort()}`;
    const result = await forge(['package', '--base', `${address}/base:1`, '--load'], fresh, { FORGE_CACHE_DIR: tempDir('forge-cache-'), PATH: `${bin}:${process.env.PATH}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('FORGE_PACKAGE_LOAD --load needs a running docker or podman (neither answered)');
    expect(result.stderr).toMatch(/hint: start one, or use --out image.tar or --push/);
    // Nothing ran before it: no build, no pull of the base (whose registry is closed), no pip.
    expect(result.stderr).not.toContain('FORGE_REGISTRY_UNREACHABLE');
    expect(existsSync(join(fresh, '.forge-output'))).toBe(false);
    noCrash(result.stderr);
  }, 120_000);

  it('a base image tag the registry does not have', async () => {
    const result = await forge(['package', '--base', `${registry.address}/base:nope`, '--out', join(tempDir(), 'x')], project, env());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`FORGE_PACKAGE_BASE the base image ${registry.address}/base:nope is not in the registry`);
    expect(result.stderr).toContain('MANIFEST_UNKNOWN');
    expect(result.stderr).toMatch(/hint: .*--base IMAGE or FORGE_BASE_IMAGE/);
    noCrash(result.stderr);
  }, 120_000);

  it('a push the registry refuses for want of credentials', async () => {
    const tokens = await startTokenService('forge', 's3cret');
    const guarded = await startRegistry({ token: tokens });
    try {
      const result = await forge(['package', '--base', base, '--push', `${guarded.address}/agents/test-agent:1`], project, env());
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('FORGE_REGISTRY_AUTH');
      expect(result.stderr).toMatch(/hint: .*FORGE_REGISTRY_USER and FORGE_REGISTRY_PASSWORD/);
      noCrash(result.stderr);
    } finally {
      await guarded.stop();
    }
  }, 180_000);

  it("refuses a --bundle whose agent.json lists a pip option as a Python dependency, before pip reads it", async () => {
    const python = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/greet.py': '# /// script\n# dependencies = ["forgetiny>=0.1"]\n# ///\n"""\nTool: greet\nDescription: Greets.\nTags: read\n"""\ndef execute(args):\n    return "hi"\n',
    });
    expect((await forge(['build', '--prod'], python)).code).toBe(0);
    const agentFile = join(python, '.forge-output', 'agent.json');
    const agent = JSON.parse(readFileSync(agentFile, 'utf8'));
    // A wheel only this option names: pip obeying it would install it.
    const planted = localWheel('forgetiny', '0.2.0', 'def greet(name):\n    return "planted"\n');
    agent.python.dependencies = [`--find-links=${planted}`, 'forgetiny>=0.1'];
    writeFileSync(agentFile, JSON.stringify(agent));
    const result = await forge(['package', '--bundle', '.forge-output', '--base', base, '--out', join(tempDir(), 'x')], python, { ...env(), PIP_NO_INDEX: '1', PIP_FIND_LINKS: tempDir('forge-no-wheels-') });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`FORGE_PY_DEPENDENCY the bundle's agent.json declares the Python dependency "--find-links=${planted}"`);
    noCrash(result.stderr);
  }, 240_000);

  it("refuses a --bundle whose agent.json pins an MCP server to an npm option, before npm reads it", async () => {
    const registry = await startServer((_req, res) => res.writeHead(404).end('{}'));
    try {
      const mcp = writeProject({ 'forge.yaml': minimalConfig() });
      expect((await forge(['build', '--prod'], mcp)).code).toBe(0);
      const agentFile = join(mcp, '.forge-output', 'agent.json');
      const agent = JSON.parse(readFileSync(agentFile, 'utf8'));
      // "--registry=URL/@1.0.0" is an npm option: every other package would come from that registry.
      const pin = (name: string, server: string) => ({ name: server, transport: 'stdio', command: 'npx', args: ['-y', name], package: { name, version: '1.0.0', args: [] } });
      agent.mcp = { servers: [pin(`--registry=${registry.url}/`, 'planted'), pin('forge-test-mcp-server', 'files')] };
      writeFileSync(agentFile, JSON.stringify(agent));
      const result = await forge(['package', '--bundle', '.forge-output', '--base', base, '--out', join(tempDir(), 'x')], mcp, { ...env(), npm_config_cache: tempDir('forge-npm-cache-') });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`FORGE_PACKAGE_MCP the bundle's agent.json pins MCP server "planted" to a package npm would not read as one: "--registry=${registry.url}/" is not an npm package name`);
      expect(registry.requests).toEqual([]);
      noCrash(result.stderr);
    } finally {
      registry.server.close();
    }
  }, 240_000);

  it('a declared Python package pip cannot install, naming the file that declares it', async () => {
    const python = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/greet.py': '# /// script\n# dependencies = ["forgetiny>=0.1"]\n# ///\n"""\nTool: greet\nDescription: Greets.\nTags: read\n"""\ndef execute(args):\n    return "hi"\n',
    });
    const result = await forge(['package', '--base', base, '--out', join(tempDir(), 'x')], python, { ...env(), PIP_NO_INDEX: '1', PIP_FIND_LINKS: tempDir('forge-no-wheels-') });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('FORGE_PYTHON_DEPS');
    expect(result.stderr).toContain('no wheel of forgetiny>=0.1');
    expect(result.stderr).toContain('(declared in tools/greet.py)');
    expect(result.stderr).toMatch(/hint: .*PIP_FIND_LINKS/);
    noCrash(result.stderr);
  }, 240_000);

  it("names the sources pip used for the image's venv (pip.conf's too), and says one cannot be reached only when pip said so", async () => {
    const python = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/greet.py': '# /// script\n# dependencies = ["forgetiny>=0.1"]\n# ///\n"""\nTool: greet\nDescription: Greets.\nTags: read\n"""\ndef execute(args):\n    return "hi"\n',
    });
    // Two indexes that answer "no such project", as a private index without the package does; then one that is down (servers close at the file's end).
    const index = await startServer((_req, res) => res.writeHead(404).end('not here'));
    const closedUrl = `http://127.0.0.1:${await closedPort()}/down/simple`;
    const wheelsDir = tempDir('forge-no-wheels-');
    const pipConf = (extra: string) => {
      const file = join(tempDir('forge-pip-conf-'), 'pip.conf');
      writeFileSync(file, `[global]\nindex-url = ${index.url}/simple\nextra-index-url = ${extra}\n`);
      return file;
    };
    const pipEnv = (conf: string) => ({ ...env(), PIP_CONFIG_FILE: conf, PIP_FIND_LINKS: wheelsDir, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INDEX: '', PIP_INDEX_URL: '', PIP_EXTRA_INDEX_URL: '' });
    const wanted = /no wheel of forgetiny>=0\.1 for linux\/\w+, Python 3\.\d+ \(declared in tools\/greet\.py\) in the sources pip used /;
    const absent = await forge(['package', '--base', base, '--out', join(tempDir(), 'x')], python, pipEnv(pipConf(`${index.url}/extra/simple`)));
    expect(absent.code).toBe(1);
    expect(absent.stderr).toMatch(wanted);
    expect(absent.stderr).toContain(`in the sources pip used (indexes ${index.url}/simple, ${index.url}/extra/simple; links ${wheelsDir})\n`);
    expect(absent.stderr).not.toMatch(/reach/);

    const down = await forge(['package', '--base', base, '--out', join(tempDir(), 'x')], python, pipEnv(pipConf(closedUrl)));
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(wanted);
    expect(down.stderr).toContain(`in the sources pip used (indexes ${index.url}/simple, ${closedUrl}; links ${wheelsDir}); pip could not reach ${closedUrl}\n`);
    noCrash(down.stderr);
  }, 240_000);
});
