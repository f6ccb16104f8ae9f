/**
 * Verified bundles: serve and --stdio refuse a bundle whose files differ from
 * checksums.json, `node runtime.mjs verify` checks alone, and a bundle built
 * with `forge build --sign KEY` requires its Ed25519 signature when
 * FORGE_VERIFY_KEY is set.
 */
import { generateKeyPairSync } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess } from '../../helpers/agent-process.ts';
import { deployBundle, forge, minimalConfig, runProcess, tempDir, writeProject } from '../../helpers/project.ts';

const files = {
  'forge.yaml': minimalConfig(),
  'tools/echo.py': '"""\nTool: echo\nDescription: Echo a message.\nTags: read\n\nInput:\n  message (str): The message.\n"""\n\ndef execute(args):\n    return {"echo": args["message"]}\n',
};

let project: string;
let signedProject: string;
let publicPem: string;
let privateFile: string;

beforeAll(async () => {
  project = writeProject(files);
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);

  const keys = generateKeyPairSync('ed25519');
  privateFile = join(tempDir('forge-keys-'), 'sign.pem');
  writeFileSync(privateFile, keys.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  publicPem = keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  signedProject = writeProject(files);
  const signed = await forge(['build', '--prod', '--sign', privateFile], signedProject);
  expect(signed.code, signed.stderr).toBe(0);
});

/** A fresh deployed copy of a project's bundle, changed by `tamper`. */
function deployed(from: string, tamper: (bundle: string) => void = () => {}): string {
  const { bundle } = deployBundle(from);
  tamper(bundle);
  return bundle;
}

const runtime = (bundle: string, args: string[], env: NodeJS.ProcessEnv = {}) => runProcess(process.execPath, [join(bundle, 'runtime.mjs'), ...args], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: 'secret', ...env } });

describe('node runtime.mjs verify', () => {
  it('passes an untouched bundle and says how many files it checked', async () => {
    const { code, stdout } = await runtime(deployed(project), ['verify']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/✓ \d+ files match checksums\.json/);
  });

  it.each([
    ['a changed runtime.mjs', (b: string) => appendFileSync(join(b, 'runtime.mjs'), '\nconsole.log("pwned");\n'), /runtime\.mjs FORGE_BUNDLE_TAMPERED runtime\.mjs was changed after the build/],
    ['a changed tool', (b: string) => appendFileSync(join(b, 'tools', 'echo.py'), '\nimport os\n'), /tools\/echo\.py FORGE_BUNDLE_TAMPERED/],
    ['a changed agent.json', (b: string) => writeFileSync(join(b, 'agent.json'), readFileSync(join(b, 'agent.json'), 'utf8').replace('"tools": [', '"tools": [ ')), /agent\.json FORGE_BUNDLE_TAMPERED/],
    ['a Python module added beside the tools', (b: string) => writeFileSync(join(b, 'tools', 'json.py'), 'raise SystemExit(3)\n'), /tools\/json\.py FORGE_BUNDLE_TAMPERED tools\/json\.py is not part of the build/],
    ['a changed prebuilt library', (b: string) => appendFileSync(join(b, 'vendor', 'mcp.cjs'), '\n;require("fs").writeFileSync("/tmp/pwned", "")\n'), /vendor\/mcp\.cjs FORGE_BUNDLE_TAMPERED vendor\/mcp\.cjs was changed after the build/],
    ['a file added beside the prebuilt libraries', (b: string) => writeFileSync(join(b, 'vendor', 'extra.cjs'), 'module.exports = 1;\n'), /vendor\/extra\.cjs is not part of the build/],
    // A folder down: a package a Python tool imports (tools/pkg/__init__.py), a module loaded by a relative path.
    ['a Python package planted under the tools', (b: string) => (mkdirSync(join(b, 'tools', 'pkg')), writeFileSync(join(b, 'tools', 'pkg', '__init__.py'), 'raise SystemExit(3)\n')), /tools\/pkg\/__init__\.py FORGE_BUNDLE_TAMPERED tools\/pkg\/__init__\.py is not part of the build/],
    ['a file planted in a folder under the prebuilt libraries', (b: string) => (mkdirSync(join(b, 'vendor', 'sub')), writeFileSync(join(b, 'vendor', 'sub', 'x.cjs'), 'module.exports = 1;\n')), /vendor\/sub\/x\.cjs is not part of the build/],
    ['a checksum list that points outside the bundle', (b: string) => writeFileSync(join(b, 'checksums.json'), readFileSync(join(b, 'checksums.json'), 'utf8').replace('"agent.json"', '"../outside.json"')), /outside the bundle/],
    ['a deleted tool', (b: string) => rmSync(join(b, 'tools', 'echo.py')), /tools\/echo\.py is listed in checksums\.json but missing/],
    ['a tool whose file became a folder', (b: string) => (rmSync(join(b, 'tools', 'echo.py')), mkdirSync(join(b, 'tools', 'echo.py'))), /tools\/echo\.py is listed in checksums\.json but is a directory/],
    ['a listed file under a file', (b: string) => writeFileSync(join(b, 'checksums.json'), readFileSync(join(b, 'checksums.json'), 'utf8').replace('"agent.json"', '"agent.json/x"')), /agent\.json\/x is listed in checksums\.json but missing/],
    ['a checksums.json that is not one', (b: string) => writeFileSync(join(b, 'checksums.json'), '{}'), /not a checksum list/],
    ['a missing checksums.json', (b: string) => rmSync(join(b, 'checksums.json')), /checksums\.json is missing from the bundle/],
  ])('refuses %s', async (_name, tamper, message) => {
    const { code, stderr } = await runtime(deployed(project, tamper), ['verify']);
    expect(code).toBe(1);
    expect(stderr).toMatch(message);
    expect(stderr).toContain('bundle verification failed');
  });
});

describe('start-time check', () => {
  const tamperRuntime = (b: string) => appendFileSync(join(b, 'runtime.mjs'), '\n// edited\n');

  it('serve refuses a tampered runtime.mjs before it listens', async () => {
    const { code, stderr } = await runtime(deployed(project, tamperRuntime), ['serve', '--port', '0']);
    expect(code).toBe(1);
    expect(stderr).toContain('runtime.mjs was changed after the build');
    expect(stderr).not.toContain('listening on');
  });

  it('--stdio refuses a tampered runtime.mjs', async () => {
    const { code, stderr, stdout } = await runtime(deployed(project, tamperRuntime), ['--stdio']);
    expect(code).toBe(1);
    expect(stderr).toContain('FORGE_BUNDLE_TAMPERED');
    expect(stdout).toBe('');
  });

  it('serve starts an untouched bundle, and FORGE_VERIFY=off starts a changed one with a warning', async () => {
    const agent = await startAgentProcess(process.execPath, [join(deployed(project), 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: 'secret' } });
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
    await agent.stop();
    const off = await startAgentProcess(process.execPath, [join(deployed(project, tamperRuntime), 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: 'secret', FORGE_VERIFY: 'off' } });
    expect(off.output()).toContain('FORGE_VERIFY=off');
    await off.stop();
  });
});

describe('the prebuilt libraries beside runtime.mjs (vendor/)', () => {
  it('are read on first use, and one changed after the start-time check is refused there, not run', async () => {
    await servingDeployedBundle(async ({ bundle, agent, marker }) => {
      // The check at start passed; now the A2A SDK, not loaded yet (the first /a2a or /mcp request loads it), is swapped for code that leaves a mark.
      plantMarker(join(bundle, 'vendor', 'a2a.cjs'), marker);
      expect((await mcpInitialize(agent.url)).ok).toBe(false);
      expect(existsSync(marker)).toBe(false);
      await agent.waitFor('vendor/a2a.cjs was changed after the build');
      // What does not need the SDKs still answers.
      expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
    });
  });

  it('MCP with sessions: the MCP SDK changed after the start-time check is refused at the first MCP request, and the server still stops cleanly', async () => {
    const bundle = deployed(project);
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: 'secret', FORGE_MCP_SESSIONS: 'stateful' } });
    const marker = join(tempDir(), 'tampered-code-ran');
    try {
      plantMarker(join(bundle, 'vendor', 'mcp.cjs'), marker);
      expect((await mcpInitialize(agent.url)).ok).toBe(false);
      expect(existsSync(marker)).toBe(false);
      await agent.waitFor('vendor/mcp.cjs was changed after the build');
      expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
    } catch (err) {
      await agent.stop();
      throw err;
    }
    // Closing the sessions (there are none: the SDK never loaded) must not cut the server's own closing short.
    expect(await agent.stop()).toBe(0);
    expect(agent.output()).toMatch(/stopped, [\d.]+ s after SIGTERM/);
  });

  it('REST: a validator library changed after the start-time check is refused at the first call that needs it, with its code', async () => {
    await servingDeployedBundle(async ({ bundle, agent, marker }) => {
      plantMarker(join(bundle, 'vendor', 'ajv.cjs'), marker);
      const res = await fetch(`${agent.url}/tools/echo`, { method: 'POST', headers: { authorization: 'Bearer secret', 'content-type': 'application/json' }, body: JSON.stringify({ message: 'hi' }) });
      expect(await res.json()).toMatchObject({ ok: false, error: { code: 'FORGE_BUNDLE_TAMPERED', message: expect.stringContaining('vendor/ajv.cjs was changed after the build') } });
      expect(existsSync(marker)).toBe(false);
    });
  });

  it.each([
    ['changed', (file: string, marker: string) => plantMarker(file, marker), 'vendor/ajv.cjs was changed after the build'],
    ['missing', (file: string) => rmSync(file), 'vendor/ajv.cjs is missing beside runtime.mjs (ENOENT)'],
  ])('`call` (which runs no start-time check) refuses a %s validator library, and runs none of it', async (_what, tamper, message) => {
    const bundle = deployed(project);
    const marker = join(tempDir(), 'tampered-code-ran');
    tamper(join(bundle, 'vendor', 'ajv.cjs'), marker);
    const { code, stdout } = await runtime(bundle, ['call', 'echo', '{"message": "hi"}', '--json']);
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_BUNDLE_TAMPERED', message: expect.stringContaining(message) } });
    expect(existsSync(marker)).toBe(false);
  });

  it('an untouched bundle answers MCP with them', async () => {
    await servingDeployedBundle(async ({ agent }) => {
      const res = await mcpInitialize(agent.url);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('"protocolVersion"');
    });
  });
});

/** A fresh deployed copy of the project's bundle, serving (its start-time check passed), and a marker path no code should write. */
async function servingDeployedBundle(use: (serving: { bundle: string; agent: Awaited<ReturnType<typeof startAgentProcess>>; marker: string }) => Promise<void>): Promise<void> {
  const bundle = deployed(project);
  const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: 'secret' } });
  try {
    await use({ bundle, agent, marker: join(tempDir(), 'tampered-code-ran') });
  } finally {
    await agent.stop();
  }
}

function mcpInitialize(url: string): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { authorization: 'Bearer secret', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  });
}

/** Prepends code that leaves `marker` behind to a vendor file: if it ever runs, the marker exists. */
function plantMarker(file: string, marker: string): void {
  writeFileSync(file, `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\n` + readFileSync(file, 'utf8'));
}

describe('node runtime.mjs verify --json', () => {
  // It printed its text on stderr and nothing on stdout, whatever the outcome.
  it('prints one document: what it checked, or the failure in the shape every command fails with, and nothing else', async () => {
    const fine = await runtime(deployed(project), ['verify', '--json']);
    expect(fine.code).toBe(0);
    expect(JSON.parse(fine.stdout)).toEqual({ ok: true, files: expect.any(Number), signed: false, warnings: [] });
    expect(fine.stderr).toBe('');
    const signed = await runtime(deployed(signedProject), ['verify', '--json'], { FORGE_VERIFY_KEY: publicPem });
    expect(JSON.parse(signed.stdout)).toMatchObject({ ok: true, signed: true });

    const tampered = await runtime(deployed(project, (b) => appendFileSync(join(b, 'runtime.mjs'), '\n// edited\n')), ['verify', '--json']);
    expect(tampered.code).toBe(1);
    expect(JSON.parse(tampered.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_BUNDLE_TAMPERED', file: 'runtime.mjs' }, warnings: [] });
    expect(tampered.stderr).toBe('');
    const missing = join(tempDir(), 'missing.pem');
    const badKey = await runtime(deployed(signedProject), ['verify', '--json'], { FORGE_VERIFY_KEY: missing });
    expect(badKey.code).toBe(1);
    expect(JSON.parse(badKey.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_VERIFY_KEY', file: missing, message: 'FORGE_VERIFY_KEY names a file that cannot be read: there is no such file', hint: expect.stringContaining('set FORGE_VERIFY_KEY') } });
  });
});

describe('signed bundles (forge build --sign)', () => {
  it('writes checksums.json.sig, and verify accepts it under the public key', async () => {
    const bundle = deployed(signedProject);
    const { code, stdout, stderr } = await runtime(bundle, ['verify'], { FORGE_VERIFY_KEY: publicPem });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('signature valid');
    const keyFile = join(tempDir(), 'pub.pem');
    writeFileSync(keyFile, publicPem);
    expect((await runtime(bundle, ['verify'], { FORGE_VERIFY_KEY: keyFile })).code).toBe(0);
  });

  it('refuses rewritten checksums that match a tampered runtime.mjs', async () => {
    const bundle = deployed(signedProject, (b) => {
      appendFileSync(join(b, 'runtime.mjs'), '\n// edited\n');
      const sums = JSON.parse(readFileSync(join(b, 'checksums.json'), 'utf8'));
      sums.files['runtime.mjs'] = createHash('sha256').update(readFileSync(join(b, 'runtime.mjs'))).digest('hex');
      writeFileSync(join(b, 'checksums.json'), JSON.stringify(sums, null, 2) + '\n');
    });
    expect((await runtime(bundle, ['verify'])).code).toBe(0); // without a key, the checksums alone agree
    const { code, stderr } = await runtime(bundle, ['serve', '--port', '0'], { FORGE_VERIFY_KEY: publicPem });
    expect(code).toBe(1);
    expect(stderr).toContain('checksums.json.sig does not match checksums.json');
  });

  it('refuses an unsigned bundle, and a bundle signed with another key, when FORGE_VERIFY_KEY is set', async () => {
    const unsigned = await runtime(deployed(project), ['verify'], { FORGE_VERIFY_KEY: publicPem });
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toContain('the bundle is not signed');
    const other = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const wrong = await runtime(deployed(signedProject), ['verify'], { FORGE_VERIFY_KEY: other });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('does not match');
  });

  it('reports a FORGE_VERIFY_KEY it cannot use as a configuration error, not as tampering', async () => {
    const bundle = deployed(signedProject);
    const notPem = join(tempDir(), 'key.txt');
    writeFileSync(notPem, 'not a key\n');
    const rsaPublic = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const garbled = join(tempDir(), 'garbled.pem');
    writeFileSync(garbled, publicPem.replace(/\n[^-].{20}/, '\nthis-is-not-base64!!'));
    const keyDir = join(tempDir(), 'keys');
    mkdirSync(keyDir);
    for (const [key, said] of [
      // Why, in words, not Node's errno (ENOENT, EISDIR); the path is the diagnostic's place.
      [join(tempDir(), 'missing.pem'), /missing\.pem FORGE_VERIFY_KEY FORGE_VERIFY_KEY names a file that cannot be read: there is no such file \(set FORGE_VERIFY_KEY/],
      [keyDir, /keys FORGE_VERIFY_KEY FORGE_VERIFY_KEY names a file that cannot be read: it is a directory \(set FORGE_VERIFY_KEY/],
      [notPem, /key\.txt FORGE_VERIFY_KEY FORGE_VERIFY_KEY is not a public key in PEM form/],
      [rsaPublic, /FORGE_VERIFY_KEY FORGE_VERIFY_KEY is an RSA key; bundles are signed with Ed25519/],
      // What the file holds instead, not OpenSSL's "error:1E08010C:DECODER routines::unsupported".
      [garbled, /garbled\.pem FORGE_VERIFY_KEY FORGE_VERIFY_KEY is not a public key in PEM form: its "-----BEGIN PUBLIC KEY-----" block does not decode \(cut short or changed\?\)/],
    ] as const) {
      for (const command of [['verify'], ['serve', '--port', '0']]) {
        const { code, stderr } = await runtime(bundle, command, { FORGE_VERIFY_KEY: key });
        expect(code, stderr).toBe(1);
        expect(stderr).toMatch(said);
        expect(stderr).toContain('set FORGE_VERIFY_KEY to the Ed25519 public key matching `forge build --sign`');
        expect(stderr).not.toContain('TAMPERED');
        expect(stderr).not.toContain('DECODER routines');
        expect(stderr).not.toMatch(/\bE(NOENT|ISDIR|ACCES)\b/);
      }
    }
  });

  // It said every line ok while serve refused to start on the key.
  it("fails the bundle's doctor on a FORGE_VERIFY_KEY serve would refuse, with its code, words and hint, and passes one it can use", async () => {
    const bundle = deployed(signedProject);
    const missing = join(tempDir(), 'missing.pem');
    const env = { FORGE_STATE_DIR: tempDir(), FORGE_VERIFY_KEY: missing };
    const text = await runtime(bundle, ['doctor'], env);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^FAIL {2}verify key {2}FORGE_VERIFY_KEY names a file that cannot be read: there is no such file; serve refuses to start$/m);
    expect(text.stdout).toContain(`${missing} FORGE_VERIFY_KEY\n`);
    expect(text.stdout).toContain('hint: set FORGE_VERIFY_KEY to the Ed25519 public key matching `forge build --sign`');
    const json = await runtime(bundle, ['doctor', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_VERIFY_KEY', file: missing, message: 'verify key: FORGE_VERIFY_KEY names a file that cannot be read: there is no such file; serve refuses to start' } });

    const usable = await runtime(bundle, ['doctor'], { ...env, FORGE_VERIFY_KEY: publicPem });
    expect(usable.code, usable.stdout).toBe(0);
    expect(usable.stdout).toMatch(/^ok {4}verify key {2}FORGE_VERIFY_KEY: an Ed25519 public key/m);
    // Not set, or not read (FORGE_VERIFY=off): no line.
    expect((await runtime(bundle, ['doctor'], { FORGE_STATE_DIR: tempDir() })).stdout).not.toContain('verify key');
    expect((await runtime(bundle, ['doctor'], { ...env, FORGE_VERIFY: 'off' })).stdout).not.toContain('verify key');
  });

  it('reports a signing key that is not an Ed25519 private key as a build error', async () => {
    const rsa = join(tempDir(), 'rsa.pem');
    writeFileSync(rsa, generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const p = writeProject(files);
    const built = await forge(['build', '--sign', rsa], p);
    expect(built.code).toBe(1);
    expect(built.stderr).toMatch(/rsa\.pem FORGE_SIGN_KEY cannot use the signing key: it is an RSA key; bundles are signed with Ed25519/);
    const missing = await forge(['build', '--sign', join(p, 'nope.pem')], p);
    expect(missing.code).toBe(1);
    // The file named once, from where the command runs, and why in words, not Node's "ENOENT: ..., open '...'".
    expect(missing.stderr).toContain('✘ nope.pem FORGE_SIGN_KEY cannot read the signing key: there is no such file\n');
  });

  it('says what a signing key file holds instead of OpenSSL\'s "DECODER routines::unsupported", with how to make a key', async () => {
    const dir = tempDir();
    const publicFile = join(dir, 'sign.pub');
    writeFileSync(publicFile, publicPem);
    const garbled = join(dir, 'garbled.pem');
    writeFileSync(garbled, readFileSync(privateFile, 'utf8').replace(/\n[^-].{20}/, '\nthis-is-not-base64!!'));
    const openssh = join(dir, 'id_ed25519');
    writeFileSync(openssh, '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n');
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'my signing key is in the vault\n');
    const p = writeProject(files);
    for (const [file, said] of [
      [publicFile, 'sign.pub FORGE_SIGN_KEY cannot use the signing key: it is a public key; signing takes the private key (its public half is for FORGE_VERIFY_KEY)'],
      [garbled, 'garbled.pem FORGE_SIGN_KEY cannot use the signing key: its "-----BEGIN PRIVATE KEY-----" block does not decode (cut short or changed?)'],
      [openssh, "id_ed25519 FORGE_SIGN_KEY cannot use the signing key: it is an OpenSSH private key (ssh-keygen's format), not a PEM key"],
      [text, 'notes.txt FORGE_SIGN_KEY cannot use the signing key: it holds no PEM key (no "-----BEGIN ...-----" line)'],
    ] as const) {
      const built = await forge(['build', '--sign', file], p);
      expect(built.code, built.stderr).toBe(1);
      expect(built.stderr).toContain(said);
      expect(built.stderr).toContain('hint: forge build --sign takes an Ed25519 private key in PEM form; make one with: openssl genpkey -algorithm ed25519 -out sign.pem');
      expect(built.stderr).not.toContain('DECODER routines');
    }
  });
});
