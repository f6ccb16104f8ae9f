/** Key-looking files in a tool dir: refused by a --prod build, warned about by a dev build, kept out by ignore:. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { holdsPrivateKey, secretFileName } from '../../stages/check-secret-files.ts';
import { forge, minimalConfig, writeProject } from '../helpers/project.ts';

const KEY_BODY = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n';
const PEM_KEY = `-----BEGIN PRIVATE KEY-----\n${KEY_BODY}-----END PRIVATE KEY-----\n`;
const PEM_CERT = `-----BEGIN CERTIFICATE-----\n${KEY_BODY}-----END CERTIFICATE-----\n`;

const greetPy = '"""\nTool: greet\nDescription: Greets.\n"""\n\ndef execute(args):\n    return "hi"\n';
const upperTs = '/**\n * Tool: upper\n * Description: Upper-cases a text.\n * Input:\n *   text (str): The text.\n */\nexport async function execute(args: { text: string }) {\n  return args.text.toUpperCase();\n}\n';
const dateYaml = 'description: Prints the date.\ntags: [read]\nrun: date\n';
// A tool that looks for keys names the header in its code: that is not a key.
const keyFinderPy = '"""\nTool: key_finder\nDescription: Says whether a text holds a private key.\nInput:\n  text (str): The text.\n"""\n\nHEADER = "-----BEGIN RSA PRIVATE KEY-----"\n\ndef execute(args):\n    return HEADER in args["text"]\n';

/** Files a user may leave beside their tools by mistake, each a secret. */
const SECRETS: Record<string, string> = {
  'tools/id_rsa': `-----BEGIN OPENSSH PRIVATE KEY-----\n${KEY_BODY}-----END OPENSSH PRIVATE KEY-----\n`,
  'tools/server.pem': PEM_KEY,
  'tools/tls/api.key': 'not even PEM: the name is enough\n',
  'tools/credentials.json': '{"aws_access_key_id": "AKIA...", "aws_secret_access_key": "..."}\n',
  'tools/secrets.yaml': 'db_password: hunter2\n',
  'tools/prod.env': 'OPENAI_API_KEY=sk-live\n',
  // A cloud service account key: an ordinary name, a private key inside a JSON string.
  'tools/my-project-4f2a.json': JSON.stringify({ type: 'service_account', private_key: PEM_KEY }),
  // Tools of each kind with a key pasted into their code: judged by content, as their names are innocent.
  'tools/deploy.py': `${greetPy.replace('Tool: greet', 'Tool: deploy')}\nKEY = """${PEM_KEY}"""\n`,
  'tools/sign.ts': `${upperTs.replace('Tool: upper', 'Tool: sign')}\nexport const KEY = \`${PEM_KEY}\`;\n`,
  'tools/push.yaml': `description: Pushes.\ntags: [read]\nrun: echo\n# ${PEM_KEY.replace(/\n/g, '\n# ')}\n`,
};

/** Files that are an ordinary part of a project: none is flagged. */
const ORDINARY: Record<string, string> = {
  'tools/greet.py': greetPy,
  'tools/upper.ts': upperTs,
  'tools/today.yaml': dateYaml,
  'tools/key_finder.py': keyFinderPy,
  'tools/secrets.py': 'def mask(text):\n    return "***"\n',
  'tools/README.md': '# Tools\nHow to keep a private key out of tools/.\n',
  'tools/data/cities.json': '{"cities": ["Paris", "Lima"]}\n',
  'tools/ca.pem': PEM_CERT,
  'tools/keys.yaml': 'shortcuts: [ctrl-c]\n',
};

function shippedTools(project: string): string[] {
  const dir = join(project, '.forge-output', 'tools');
  return existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort() : [];
}

function archived(project: string): string[] {
  return execFileSync('tar', ['tzf', join(project, '.forge-output', 'test-agent-1.0.0.tgz')], { encoding: 'utf8' }).trim().split('\n');
}

describe('check-secret-files', () => {
  it('refuses a --prod build that would ship a key-looking file, naming each with a code and a hint', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), ...ORDINARY, ...SECRETS });
    const { code, stdout, stderr } = await forge(['build', '--prod'], project);
    const output = stdout + stderr;
    expect(code).toBe(1);
    for (const file of Object.keys(SECRETS)) expect(output).toContain(`✘ ${file} FORGE_SECRET_FILE ${file} looks like a secret`);
    expect(output).toContain('tools/server.pem looks like a secret (it holds a PEM private key)');
    expect(output).toContain("tools/id_rsa looks like a secret (its name says it is an SSH private key)");
    expect(output).toContain('hint: move it out of the tool directory and give it to the agent at run time (an environment variable, or a file mounted into the container), or list it under ignore: in forge.yaml (ignore: [tools/id_rsa]) to keep it out of the bundle; if it is no secret (a test fixture), list it under not_secrets: (not_secrets: [tools/id_rsa])');
    for (const file of Object.keys(ORDINARY)) expect(output).not.toContain(`${file} FORGE_SECRET_FILE`);
    expect(output).not.toMatch(/\n\s+at /);
    expect(existsSync(join(project, '.forge-output'))).toBe(false);
  });

  it('warns in a dev build, saying --prod refuses it, and again when the next build is a cache hit', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greetPy, 'tools/id_rsa': SECRETS['tools/id_rsa'] });
    const { code, stdout, stderr } = await forge(['build'], project);
    const output = stdout + stderr;
    expect(code, output).toBe(0);
    expect(output).toContain('tools/id_rsa FORGE_SECRET_FILE tools/id_rsa looks like a secret');
    expect(output).toContain('forge build --prod refuses it');
    const again = await forge(['build'], project);
    expect(again.stdout).toContain('up to date (cached)');
    expect(again.stdout + again.stderr).toContain('tools/id_rsa FORGE_SECRET_FILE tools/id_rsa looks like a secret');
  });

  it('refuses forge package too, which builds with --prod', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greetPy, 'tools/api.key': 'k\n' });
    const { code, stdout, stderr } = await forge(['package', '--offline'], project);
    expect(code).not.toBe(0);
    expect(stdout + stderr).toContain('tools/api.key FORGE_SECRET_FILE');
  });

  it('builds ordinary tools, docs and data with --prod, flagging none, and ships no dotfile', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), ...ORDINARY, 'tools/.env': 'OPENAI_API_KEY=sk-live\n', 'tools/.npmrc': '//registry.npmjs.org/:_authToken=npm_x\n' });
    const { code, stdout, stderr } = await forge(['build', '--prod'], project);
    const output = stdout + stderr;
    expect(code, output).toBe(0);
    expect(output).not.toContain('FORGE_SECRET_FILE');
    expect(shippedTools(project)).toEqual(['README.md', 'ca.pem', 'data/cities.json', 'greet.py', 'key_finder.py', 'keys.yaml', 'secrets.py', 'today.yaml']);
  });

  it('keeps the files forge.yaml ignores out of the bundle and its archive, and builds with --prod', async () => {
    const ignore = 'ignore:\n  - "*.key"\n  - tools/id_rsa\n  - tools/server.pem\n  - tools/credentials.json\n  - tools/secrets.yaml\n  - tools/prod.env\n  - tools/my-project-*.json\n  - tools/deploy.py\n  - tools/sign.ts\n  - tools/push.yaml\n';
    const project = writeProject({ 'forge.yaml': minimalConfig(ignore), ...ORDINARY, ...SECRETS });
    const { code, stdout, stderr } = await forge(['build', '--prod'], project);
    const output = stdout + stderr;
    expect(code, output).toBe(0);
    expect(output).not.toContain('FORGE_SECRET_FILE');
    const shipped = shippedTools(project);
    const inArchive = archived(project);
    for (const file of Object.keys(SECRETS)) {
      const path = file.slice('tools/'.length);
      expect(shipped).not.toContain(path);
      expect(inArchive).not.toContain(`tools/${path}`);
    }
    expect(shipped).toContain('data/cities.json');
  });

  it('ships with --prod the files forge.yaml lists under not_secrets, and still refuses every other', async () => {
    const fixtures = ['tools/tls/api.key', 'tools/my-project-4f2a.json'];
    const project = writeProject({ 'forge.yaml': minimalConfig('not_secrets:\n  - tools/tls/\n  - "my-project-*.json"\n'), 'tools/greet.py': greetPy, ...SECRETS });
    const refused = await forge(['build', '--prod'], project);
    expect(refused.code).toBe(1);
    const flagged = Object.keys(SECRETS).filter((file) => (refused.stdout + refused.stderr).includes(`${file} FORGE_SECRET_FILE`));
    expect(flagged).toEqual(Object.keys(SECRETS).filter((file) => !fixtures.includes(file)));
    const onlyFixtures = writeProject({ 'forge.yaml': minimalConfig('not_secrets: [tools/tls/, "my-project-*.json"]\n'), 'tools/greet.py': greetPy, ...Object.fromEntries(fixtures.map((f) => [f, SECRETS[f]])) });
    const built = await forge(['build', '--prod'], onlyFixtures);
    expect(built.code, built.stdout + built.stderr).toBe(0);
    expect(built.stdout + built.stderr).not.toContain('FORGE_SECRET_FILE');
    expect(shippedTools(onlyFixtures)).toEqual(['greet.py', 'my-project-4f2a.json', 'tls/api.key']);
  });

  it('is a warning of forge validate, text and JSON, which passes; not_secrets quiets it', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greetPy, 'tools/id_rsa': SECRETS['tools/id_rsa'] });
    const text = await forge(['validate'], project);
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stderr).toContain('tools/id_rsa FORGE_SECRET_FILE tools/id_rsa looks like a secret');
    const json = JSON.parse((await forge(['validate', '--json'], project)).stdout);
    expect(json).toMatchObject({ ok: true, warnings: [{ code: 'FORGE_SECRET_FILE', file: 'tools/id_rsa' }] });
    const quiet = writeProject({ 'forge.yaml': minimalConfig('not_secrets: [tools/id_rsa]\n'), 'tools/greet.py': greetPy, 'tools/id_rsa': SECRETS['tools/id_rsa'] });
    expect((await forge(['validate'], quiet)).stderr).not.toContain('FORGE_SECRET_FILE');
  });

  it('ignores a whole folder named with a trailing slash', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('ignore: [tools/keys/]\n'), 'tools/greet.py': greetPy, 'tools/keys/deploy.key': 'k\n', 'tools/keys/notes.txt': 'n\n' });
    const { code, stdout, stderr } = await forge(['build', '--prod'], project);
    expect(code, stdout + stderr).toBe(0);
    expect(shippedTools(project)).toEqual(['greet.py']);
  });
});

describe('secretFileName', () => {
  it.each(['id_rsa', 'id_ed25519', 'id_ecdsa_sk', 'server.key', 'cert.p12', 'store.pfx', 'putty.ppk', 'release.jks', 'app.keystore', 'vault.kdbx', 'credentials', 'credentials.json', 'client_secret_1234.apps.googleusercontent.com.json', 'secrets.yaml', 'secret.yml', 'secrets.json', 'secrets.toml', 'prod.env', 'terraform.tfstate'])('flags %s', (name) => {
    expect(secretFileName(name)).toBeDefined();
  });

  it.each(['id_rsa.pub', 'secrets.py', 'credentials.ts', 'keys.yaml', 'key_finder.py', 'ca.pem', 'README.md', 'data.json', 'environment.yaml', 'keyboard.txt', 'monkey.png'])('leaves %s alone', (name) => {
    expect(secretFileName(name)).toBeUndefined();
  });
});

describe('holdsPrivateKey', () => {
  it.each([
    ['a PEM private key', PEM_KEY, true],
    ['an RSA key', `-----BEGIN RSA PRIVATE KEY-----\n${KEY_BODY}`, true],
    ['an encrypted key with its headers', `-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n${KEY_BODY}`, true],
    ['a key inside a JSON string', JSON.stringify({ private_key: PEM_KEY }), true],
    ['a certificate', PEM_CERT, false],
    ['code that names the header', keyFinderPy, false],
  ])('%s: %s', (_name, text, expected) => {
    expect(holdsPrivateKey(text)).toBe(expected);
  });
});
