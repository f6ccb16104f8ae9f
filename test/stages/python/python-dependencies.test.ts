/**
 * Declared Python dependencies end to end, with a local package (a wheel in a
 * find-links folder): PEP 723 blocks and requirements.txt are recorded by the
 * build, `forge tool run` installs them into .forge/python-venv and reuses it,
 * a package pip cannot find is a diagnostic (exit 1), and the built bundle
 * refuses to start without them and works with them.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/free-port.ts';
import { startServer } from '../../helpers/http-server.ts';
import { forgetinyGreetTool, localWheel, pipFrom } from '../../helpers/python-wheel.ts';
import { deployBundle, forge, minimalConfig, runProcess, tempDir, writeProject } from '../../helpers/project.ts';

const greetTool = forgetinyGreetTool();

/** A TypeScript tool composed of greet: it reaches Python through it. */
const COMPOSED_OF_GREET = `/**
 * Tool: greet_twice
 * Description: Greets someone twice through greet.
 * Tags: read
 * Composed Of: greet
 *
 * Input:
 *   name (str): Who to greet.
 */
export async function execute(args, ctx) {
  const once = await ctx.registry.execute('greet', { name: args.name });
  if (!once.ok) throw new Error(once.error.message);
  return once.value + ' / ' + once.value;
}
`;

const TITLE_CASE = `/**
 * Tool: title_case
 * Description: Capitalises each word.
 * Tags: read
 *
 * Input:
 *   text (str): The text.
 */
export function execute(args) {
  return args.text.replace(/\\b\\w/g, (c) => c.toUpperCase());
}
`;

let wheels: string;

beforeAll(() => {
  wheels = localWheel('forgetiny', '0.1.0', 'def greet(name):\n    return f"hello {name} from forgetiny"\n');
});

const project = (extra: Record<string, string> = {}) => writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greetTool, ...extra });

describe('forge tool run with declared Python dependencies', () => {
  it('installs them into .forge/python-venv once, then reuses it', async () => {
    const dir = project();
    const first = await forge(['tool', 'run', 'greet', '--input', '{"name": "Ada"}'], dir, pipFrom(wheels));
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('hello Ada from forgetiny');
    expect(first.stderr).toContain('python: installing forgetiny>=0.1');
    expect(existsSync(join(dir, '.forge', 'python-venv', 'forge-requirements.txt'))).toBe(true);
    const second = await forge(['tool', 'run', 'greet', '--input', '{"name": "Grace"}'], dir, pipFrom(wheels));
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('hello Grace from forgetiny');
    expect(second.stderr).not.toContain('installing');
  }, 120_000);

  it('refuses the tool with a located diagnostic when pip cannot find the package (offline)', async () => {
    const dir = project();
    const { code, stderr } = await forge(['tool', 'run', 'greet', '--input', '{"name": "Ada"}'], dir, pipFrom(tempDir('forge-no-wheels-')));
    expect(code).toBe(1);
    expect(stderr).toContain('FORGE_PYTHON_DEPS cannot install the Python package forgetiny>=0.1 (declared in tools/greet.py)');
    // At the line that declares it, with that line shown.
    expect(stderr).toMatch(/tools\/greet\.py:4:6 FORGE_PYTHON_DEPS .*\n +4 │ #   "forgetiny>=0\.1",\n/);
    expect(stderr).toContain('PIP_FIND_LINKS');
    expect(stderr).not.toContain('Traceback');
  }, 120_000);

  it("names the sources pip used (pip.conf's too), and says one cannot be reached only when pip said so", async () => {
    // Two indexes that answer "no such project", as a private index without the package does.
    const index = await startServer((_req, res) => res.writeHead(404).end('not here'));
    const closedUrl = `http://127.0.0.1:${await freePort()}/down/simple`;
    const wheelsDir = tempDir('forge-no-wheels-');
    const pipConf = (extra: string) => {
      const file = join(tempDir('forge-pip-conf-'), 'pip.conf');
      writeFileSync(file, `[global]\nindex-url = ${index.url}/simple\nextra-index-url = ${extra}\n`);
      return file;
    };
    const env = (conf: string) => ({ PIP_CONFIG_FILE: conf, PIP_FIND_LINKS: wheelsDir, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INDEX: '', PIP_INDEX_URL: '', PIP_EXTRA_INDEX_URL: '' });

    const absent = await forge(['tool', 'run', 'greet', '--input', '{"name": "Ada"}'], project(), env(pipConf(`${index.url}/extra/simple`)));
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain(`FORGE_PYTHON_DEPS cannot install the Python package forgetiny>=0.1 (declared in tools/greet.py): not found in the sources pip used (indexes ${index.url}/simple, ${index.url}/extra/simple; links ${wheelsDir})\n`);
    expect(absent.stderr).not.toMatch(/reach/);

    const down = await forge(['tool', 'run', 'greet', '--input', '{"name": "Ada"}'], project(), env(pipConf(closedUrl)));
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`not found in the sources pip used (indexes ${index.url}/simple, ${closedUrl}; links ${wheelsDir}); pip could not reach ${closedUrl}\n`);
  }, 120_000);

  // The tool asked for is not Python, but it reaches a Python tool or runs a python: step.
  const metaTool = 'description: Greets through greet.\ntags: [read]\nparameters:\n  name: { type: string, description: Who. }\nsteps:\n  - name: hi\n    tool: greet\n    args: { name: "{name}" }\noutput: "{hi.output}"\n';
  const inlineTool = 'description: Greets with forgetiny inline.\ntags: [read]\nparameters:\n  name: { type: string, description: Who. }\nsteps:\n  - name: hi\n    python: |\n      import forgetiny\n      print(forgetiny.greet({name}))\noutput: "{hi.output}"\n';
  it.each([
    ['a TypeScript tool composed of it', 'greet_twice', { 'tools/greet_twice.ts': COMPOSED_OF_GREET }],
    ['a YAML meta-tool with a tool: step calling it', 'greet_meta', { 'tools/greet_meta.yaml': metaTool }],
    ['a YAML tool with a python: step importing the package', 'greet_inline', { 'tools/greet_inline.yaml': inlineTool, 'requirements.txt': 'forgetiny\n' }],
  ])('installs them for %s', async (_, name, files) => {
    const dir = project(files);
    const run = await forge(['tool', 'run', name, '--input', '{"name": "Ada"}'], dir, pipFrom(wheels));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('hello Ada from forgetiny');
    expect(run.stderr).toContain('python: installing forgetiny');
  }, 120_000);

  it('takes requirements.txt as pip-compile --generate-hashes writes it (continued lines, hashes), saying once that the hashes are left out', async () => {
    const hash = `sha256:${'0'.repeat(64)}`;
    const dir = project({
      'tools/greet.py': greetTool.replace(/^# \/\/\/ script[\s\S]*?# \/\/\/\n/, ''),
      'requirements.txt': `#\n# This file is autogenerated by pip-compile\n#\nforgetiny==0.1.0 \\\n    --hash=${hash} \\\n    --hash=${hash}\n    # via -r requirements.in\n`,
    });
    const run = await forge(['tool', 'run', 'greet', '--input', '{"name": "Kay"}'], dir, pipFrom(wheels));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('hello Kay from forgetiny');
    const built = await forge(['build'], dir);
    expect(built.code, built.stderr).toBe(0);
    expect(built.stderr.match(/FORGE_PY_REQUIREMENTS/g)).toHaveLength(1);
    expect(built.stderr).toContain('the --hash options of 1 requirement are left out');
    expect(readFileSync(join(dir, '.forge-output', 'python-requirements.txt'), 'utf8')).toContain('forgetiny==0.1.0');
  }, 120_000);

  it('takes requirements.txt too', async () => {
    const dir = project({ 'tools/greet.py': greetTool.replace(/^# \/\/\/ script[\s\S]*?# \/\/\/\n/, ''), 'requirements.txt': '# the tools need\nforgetiny==0.1.0\n' });
    const run = await forge(['tool', 'run', 'greet', '--input', '{"name": "Lin"}'], dir, pipFrom(wheels));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('hello Lin from forgetiny');
  }, 120_000);
});

describe('a dependency pip would read as something else is refused, not passed to pip', () => {
  /** A wheel of the same package, newer, in a folder only the tool file names: pip picks it when it obeys the file. */
  const planted = () => localWheel('forgetiny', '9.9.0', 'def greet(name):\n    return "planted"\n');
  const declaring = (dependency: string) => greetTool.replace('#   "forgetiny>=0.1",', `#   "forgetiny>=0.1", ${dependency},`);

  it('a pip option as a dependency (--find-links): forge tool run refuses at its line and column, and pip never sees it', async () => {
    const dir = project({ 'tools/greet.py': declaring(`"--find-links=${planted()}"`) });
    const run = await forge(['tool', 'run', 'greet', '--input', '{"name": "Ada"}'], dir, pipFrom(wheels));
    expect(run.stdout).not.toContain('planted');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/tools\/greet\.py:4:23 FORGE_PY_DEPENDENCY the dependency "--find-links=.*" is not a PEP 508 requirement pip would read as written: it starts with "-"/);
    expect(existsSync(join(dir, '.forge', 'python-venv', 'forge-requirements.txt'))).toBe(false);
  }, 120_000);

  it('a line break pip splits on but the TOML string hides (\\u001c) before the option', async () => {
    const dir = project({ 'tools/greet.py': declaring(`"forgetiny\\u001c--find-links=${planted()}"`) });
    const run = await forge(['tool', 'run', 'greet', '--input', '{"name": "Ada"}'], dir, pipFrom(wheels));
    expect(run.stdout).not.toContain('planted');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('FORGE_PY_DEPENDENCY');
    expect(run.stderr).toContain('U+001C');
  }, 120_000);

  it('the build fails on it and writes no python-requirements.txt with it', async () => {
    const dir = project({ 'tools/greet.py': declaring('"-e git+https://example.invalid/x.git#egg=x"') });
    const built = await forge(['build', '--prod'], dir);
    expect(built.code).toBe(1);
    expect(built.stderr).toMatch(/tools\/greet\.py:4:23 FORGE_PY_DEPENDENCY/);
    const requirements = join(dir, '.forge-output', 'python-requirements.txt');
    if (existsSync(requirements)) expect(readFileSync(requirements, 'utf8')).not.toContain('git+');
  }, 120_000);

  it('requirements.txt: options after a requirement and ${VAR}s are ignored with a warning, the rest installed', async () => {
    const dir = project({
      'tools/greet.py': greetTool.replace(/^# \/\/\/ script[\s\S]*?# \/\/\/\n/, ''),
      'requirements.txt': `forgetiny>=0.1 --find-links=${planted()}\nforgetiny @ file:///\${HOME}/x.whl\nforgetiny==0.1.0\n`,
    });
    const run = await forge(['tool', 'run', 'greet', '--input', '{"name": "Lin"}'], dir, pipFrom(wheels));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('hello Lin from forgetiny');
    const built = await forge(['build'], dir);
    expect(built.stderr).toMatch(/requirements\.txt:1:1 FORGE_PY_REQUIREMENTS .*a word in it starts with "-"/);
    expect(built.stderr).toMatch(/requirements\.txt:2:1 FORGE_PY_REQUIREMENTS .*"\$\{"/);
  }, 120_000);
});

describe('the build records them', () => {
  it('in agent.json, python-requirements.txt and the Dockerfile\'s venv', async () => {
    const dir = project({ 'requirements.txt': 'forgetiny\n' });
    const built = await forge(['build', '--prod'], dir);
    expect(built.code, built.stderr).toBe(0);
    const agent = JSON.parse(readFileSync(join(dir, '.forge-output', 'agent.json'), 'utf8'));
    expect(agent.python).toEqual({ dependencies: ['forgetiny', 'forgetiny>=0.1'], declared_in: { forgetiny: ['requirements.txt'], 'forgetiny>=0.1': ['tools/greet.py'] } });
    expect(readFileSync(join(dir, '.forge-output', 'python-requirements.txt'), 'utf8')).toBe('forgetiny\nforgetiny>=0.1\n');
    const dockerfile = readFileSync(join(dir, '.forge-output', 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('python3 python3-venv');
    expect(dockerfile).toContain('/opt/forge-venv/bin/pip install --no-cache-dir --disable-pip-version-check -r /tmp/python-requirements.txt');
    expect(dockerfile).toContain('ENV FORGE_PYTHON=/opt/forge-venv/bin/python');
  }, 120_000);

  it('reports a broken `# /// script` block at its line', async () => {
    const dir = project({ 'tools/greet.py': greetTool.replace('"forgetiny>=0.1",', '"forgetiny>=0.1",,') });
    const built = await forge(['build'], dir);
    expect(built.code).toBe(1);
    expect(built.stderr).toMatch(/tools\/greet\.py:4:\d+ FORGE_PY_METADATA the `# \/\/\/ script` block is not valid TOML/);
  });
});

/** The project built with --prod and deployed (deployBundle): a work dir with .forge-output/ in it. */
async function builtAndDeployed(extra?: Record<string, string>): Promise<ReturnType<typeof deployBundle>> {
  const dir = project(extra);
  expect((await forge(['build', '--prod'], dir)).code).toBe(0);
  return deployBundle(dir);
}

/** `node runtime.mjs ARGS` run from the deployed bundle's work dir. */
const runtime = ({ workDir, bundle }: ReturnType<typeof deployBundle>, args: readonly string[], env: NodeJS.ProcessEnv) => runProcess(process.execPath, [join(bundle, 'runtime.mjs'), ...args], { cwd: workDir, env });

describe('the bundle', () => {
  it('refuses to start without the packages, and runs the tool with FORGE_PYTHON at a venv that has them', async () => {
    const deployed = await builtAndDeployed();
    const without = await runtime(deployed, ['call', 'greet', '{"name": "Ada"}'], { FORGE_PYTHON: '/usr/bin/python3' });
    expect(without.code).toBe(1);
    expect(without.stderr).toContain('FORGE_PYTHON_DEPS the tools need Python packages that /usr/bin/python3');
    expect(without.stderr).toContain('forgetiny');
    // From the work dir, the hint names the requirements file where it is, not as if run inside .forge-output/.
    expect(without.stderr).toContain('venv/bin/pip install -r .forge-output/python-requirements.txt');

    const venv = join(tempDir('forge-venv-'), 'venv');
    execFileSync('python3', ['-m', 'venv', '--without-pip', venv]);
    execFileSync('python3', ['-m', 'pip', '--python', join(venv, 'bin', 'python'), 'install', '-q', '-r', join(deployed.bundle, 'python-requirements.txt')], { env: { ...process.env, ...pipFrom(wheels) } });
    const withVenv = await runtime(deployed, ['call', 'greet', '{"name": "Ada"}'], { FORGE_PYTHON: join(venv, 'bin', 'python') });
    expect(withVenv.code, withVenv.stderr).toBe(0);
    expect(withVenv.stdout).toContain('hello Ada from forgetiny');
  }, 120_000);

  it('doctor reports the missing packages as serve would refuse them', async () => {
    const deployed = await builtAndDeployed();
    const doctor = await runtime(deployed, ['doctor'], { FORGE_PYTHON: '/usr/bin/python3', FORGE_SANDBOX: 'off' });
    expect(doctor.code).toBe(1);
    // The code on its own line under the check, as every other check shows it.
    expect(doctor.stdout).toMatch(/FAIL +python +the tools need Python packages that \/usr\/bin\/python3 does not have: forgetiny\S*\n +FORGE_PYTHON_DEPS\n/);
    expect(doctor.stdout).toContain('hint: install them into a virtual environment');
    expect(doctor.stdout).toContain('-r .forge-output/python-requirements.txt');
    const serve = await runtime(deployed, ['serve'], { FORGE_PYTHON: '/usr/bin/python3', FORGE_SANDBOX: 'off' });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain('FORGE_PYTHON_DEPS');
  }, 120_000);

  it('doctor --json names a missing interpreter FORGE_PYTHON_MISSING and missing packages FORGE_PYTHON_DEPS, the codes serve refuses with', async () => {
    const deployed = await builtAndDeployed();
    // The interpreter FORGE_PYTHON names is not there: the code a Python tool's call fails with too, not doctor's catch-all.
    const noPython = { FORGE_PYTHON: '/nonexistent/forge-test/python3', FORGE_SANDBOX: 'off' };
    const missing = await runtime(deployed, ['doctor', '--json'], noPython);
    expect(missing.code, missing.stderr).toBe(1);
    const doc = JSON.parse(missing.stdout);
    expect(doc.error).toMatchObject({ code: 'FORGE_PYTHON_MISSING', message: expect.stringContaining('FORGE_PYTHON=/nonexistent/forge-test/python3 is not a working Python interpreter'), hint: expect.stringContaining('FORGE_PYTHON') });
    expect(doc.checks).toContainEqual(expect.objectContaining({ name: 'python', ok: false, code: 'FORGE_PYTHON_MISSING' }));
    const serve = await runtime(deployed, ['serve'], noPython);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain('FORGE_PYTHON_MISSING');
    // An interpreter without the packages.
    const lacking = await runtime(deployed, ['doctor', '--json'], { FORGE_PYTHON: '/usr/bin/python3', FORGE_SANDBOX: 'off' });
    expect(lacking.code, lacking.stderr).toBe(1);
    expect(JSON.parse(lacking.stdout).error).toMatchObject({ code: 'FORGE_PYTHON_DEPS', message: expect.stringContaining('forgetiny') });
  }, 120_000);

  it('serve says a usage mistake (--no-auth on 0.0.0.0) before the missing packages', async () => {
    const deployed = await builtAndDeployed();
    for (const [args, env] of [[['--no-auth', '--host', '0.0.0.0'], {}], [['--no-auth'], { FORGE_HOST: '0.0.0.0' }]] as const) {
      const serve = await runtime(deployed, ['serve', '--port', '0', ...args], { FORGE_PYTHON: '/usr/bin/python3', FORGE_SANDBOX: 'off', ...env });
      expect(serve.code).toBe(2);
      expect(serve.stderr).toContain('--no-auth is only allowed on a loopback host (127.0.0.1, ::1, localhost), not 0.0.0.0');
      expect(serve.stderr).toContain('serve [--host H]');
      expect(serve.stderr).not.toContain('FORGE_PYTHON_DEPS');
    }
  }, 120_000);

  it('call runs a tool that reaches no Python without the packages', async () => {
    const deployed = await builtAndDeployed({ 'tools/title_case.ts': TITLE_CASE, 'tools/greet_twice.ts': COMPOSED_OF_GREET });
    const env = { FORGE_PYTHON: '/usr/bin/python3' };
    const plain = await runtime(deployed, ['call', 'title_case', '{"text": "hello there"}'], env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('Hello There');
    // A TypeScript tool that calls the Python tool still needs them.
    const composed = await runtime(deployed, ['call', 'greet_twice', '{"name": "Ada"}'], env);
    expect(composed.code).toBe(1);
    expect(composed.stderr).toContain('FORGE_PYTHON_DEPS');
  }, 120_000);
});
