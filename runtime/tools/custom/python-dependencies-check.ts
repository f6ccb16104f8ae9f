/**
 * Before a bundle serves or calls tools: are the Python packages agent.json
 * lists installed in the interpreter the tools will run with (FORGE_PYTHON,
 * or python3 on PATH)? One short Python process asks importlib.metadata.
 * Missing packages stop the start with a message that says how to install
 * them, instead of a ModuleNotFoundError at the first call.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { error, type Diagnostic } from '../../diagnostics.ts';
import type { PythonDependencies } from '../../manifest.ts';
import { resolvePython } from './python-interpreter.ts';
import { requirementName } from './python-requirement.ts';

const ASK = `import json, sys
from importlib import metadata
missing = []
for name in json.loads(sys.stdin.read()):
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        missing.append(name)
print(json.dumps(missing))
`;

/**
 * `requirements` names the bundle's python-requirements.txt as the hint shows it
 * (requirementsFileShown): the hint's command must work from where the user is.
 */
export async function checkPythonDependencies(deps: PythonDependencies, requirements: string, env: NodeJS.ProcessEnv = process.env): Promise<Diagnostic | undefined> {
  const names = deps.dependencies.map(requirementName).filter((n): n is string => !!n);
  if (!names.length) return undefined;
  let python: string;
  try {
    python = await resolvePython(env);
  } catch (err) {
    // No interpreter at all: the code a Python tool's call fails with (PythonNotFoundError), not that of missing packages.
    return error('FORGE_PYTHON_MISSING', `the tools need Python packages (${names.join(', ')}), but ${(err as Error).message}`, {}, 'install python3, or set FORGE_PYTHON to a virtual environment\'s python');
  }
  const missing = await new Promise<string[] | string>((resolve) => {
    const child = execFile(python, ['-c', ASK], { env, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) return resolve(String(stderr || err.message).trim().split('\n').slice(-1)[0]);
      try {
        resolve(JSON.parse(stdout) as string[]);
      } catch {
        resolve(`unexpected answer: ${stdout.slice(0, 200)}`);
      }
    });
    child.stdin?.end(JSON.stringify(names));
  });
  if (typeof missing === 'string') return error('FORGE_PYTHON_DEPS', `cannot check the Python packages with ${python}: ${missing}`);
  if (!missing.length) return undefined;
  return error(
    'FORGE_PYTHON_DEPS',
    `the tools need Python packages that ${python} does not have: ${missing.join(', ')}`,
    {},
    `install them into a virtual environment and point FORGE_PYTHON at it: python3 -m venv venv && venv/bin/pip install -r ${requirements} && export FORGE_PYTHON=$PWD/venv/bin/python`,
  );
}

/**
 * The bundle's python-requirements.txt as a shell command run in `cwd` names it: relative
 * when it is below (.forge-output/python-requirements.txt from the project), absolute when not.
 */
export function requirementsFileShown(bundleDir: string, cwd: string = process.cwd()): string {
  const file = join(resolve(bundleDir), 'python-requirements.txt');
  const below = relative(cwd, file);
  const shown = below.startsWith('..') || isAbsolute(below) ? file : below;
  return /^[\w./-]+$/.test(shown) ? shown : `'${shown.replaceAll("'", "'\\''")}'`;
}

/** The virtual environment FORGE_PYTHON belongs to (its packages must be readable inside the tool sandbox). */
export function pythonEnvironmentDirs(env: NodeJS.ProcessEnv): string[] {
  if (!env.FORGE_PYTHON) return [];
  const root = dirname(dirname(resolve(env.FORGE_PYTHON)));
  return existsSync(resolve(root, 'pyvenv.cfg')) ? [root] : [];
}
