/**
 * The project's Python environment for `forge run` and `forge tool run`:
 * .forge/python-venv, made with the resolved interpreter and filled by its
 * pip (--python) with the declared packages. It is made once and reused while the
 * declarations stay the same (the installed list is kept beside it).
 *
 * pip uses the user's own settings (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf);
 * when it cannot find a package — offline, or a private package without its
 * index — the diagnostic names the package and the settings to use, not
 * pip's whole output.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { error, DiagnosticError } from '../../runtime/diagnostics.ts';
import type { PythonDependencies } from '../../runtime/manifest.ts';
import { resolvePython } from '../../runtime/tools/custom/python-interpreter.ts';
import { distributionKey } from '../../runtime/tools/custom/python-requirement.ts';
import { declarationSite } from './declaration-site.ts';
import { quickPipEnvironment } from './pip-environment.ts';
import { describeSources, pipSources, unreachedNote } from './pip-sources.ts';
import { requirementsText } from './python-dependencies.ts';

const run = promisify(execFile);

export function projectVenvDir(root: string): string {
  return join(root, '.forge', 'python-venv');
}

export function venvPython(venv: string): string {
  return process.platform === 'win32' ? join(venv, 'Scripts', 'python.exe') : join(venv, 'bin', 'python');
}

/** Returns the venv's python, made and filled if needed; throws a DiagnosticError when pip cannot install. */
export async function ensureProjectVenv(root: string, deps: PythonDependencies, options: { env?: NodeJS.ProcessEnv; log?: (line: string) => void } = {}): Promise<string> {
  const env = options.env ?? process.env;
  const venv = projectVenvDir(root);
  const python = venvPython(venv);
  const wanted = requirementsText(deps);
  const marker = join(venv, 'forge-requirements.txt');
  if (existsSync(python) && existsSync(marker) && readFileSync(marker, 'utf8') === wanted) return python;

  // The venv is made without its own pip (ensurepip costs seconds and is a separate Debian
  // package); the interpreter's pip installs into it with --python.
  const base = await resolvePython(env);
  if (!existsSync(python)) {
    mkdirSync(join(root, '.forge'), { recursive: true });
    try {
      await run(base, ['-m', 'venv', '--without-pip', venv], { env, timeout: 120_000 });
    } catch (err) {
      rmSync(venv, { recursive: true, force: true });
      throw new DiagnosticError([error('FORGE_PYTHON_VENV', `cannot make a virtual environment with ${base}: ${lastLine((err as { stderr?: string }).stderr ?? (err as Error).message)}`, {}, 'install the venv module (Debian: apt-get install python3-venv), or set FORGE_PYTHON to another interpreter')]);
    }
  }
  rmSync(marker, { force: true });
  options.log?.(`python: installing ${deps.dependencies.join(', ')} into ${venv}`);
  const list = join(venv, 'forge-requirements.pending.txt');
  writeFileSync(list, wanted);
  try {
    // Not -q: pip's "Looking in indexes/links" lines say which sources it used, for the message if it fails.
    await run(base, ['-m', 'pip', '--python', python, 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', '-r', list], { env: quickPipEnvironment(env), timeout: 600_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? (err as Error).message);
    if (/No module named pip/.test(stderr)) throw new DiagnosticError([error('FORGE_PYTHON_VENV', `${base} has no pip to install ${deps.dependencies.join(', ')} with`, {}, 'install pip (Debian: apt-get install python3-pip), or set FORGE_PYTHON to an interpreter that has it')]);
    throw new DiagnosticError([pipDiagnostic(stderr, String((err as { stdout?: string }).stdout ?? ''), root, deps, env)]);
  } finally {
    rmSync(list, { force: true });
  }
  writeFileSync(marker, wanted);
  return python;
}

function pipDiagnostic(stderr: string, stdout: string, root: string, deps: PythonDependencies, env: NodeJS.ProcessEnv) {
  const notFound = /No matching distribution found for (\S+)/.exec(stderr)?.[1];
  const sources = pipSources(stdout, env);
  // "Cannot be reached" only of what pip said it could not connect to.
  const reach = unreachedNote(stderr, sources);
  // The declared requirement of that name, compared as pip compares names ("six" is not "sixel").
  const missing = notFound ? distributionKey(notFound) : undefined;
  const requirement = missing ? deps.dependencies.find((d) => distributionKey(d) === missing) : undefined;
  const declaredIn = requirement ? deps.declared_in[requirement] ?? [] : [];
  const message = notFound
    ? `cannot install the Python package ${notFound}${declaredIn.length ? ` (declared in ${declaredIn.join(', ')})` : ''}: not found in the sources pip used (${describeSources(sources)})${reach}`
    : `pip could not install ${deps.dependencies.join(', ')}: ${lastLine(stderr)}`;
  // At the first place that declares it: the line to change if the name is wrong.
  const at = requirement && declaredIn.length ? declarationSite(root, declaredIn[0], requirement) : {};
  return error('FORGE_PYTHON_DEPS', message, at, 'point pip at a source that has it: PIP_FIND_LINKS=DIR (a folder of wheels) or PIP_INDEX_URL=URL (a private index); the tool does not run without it');
}

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).slice(-1)[0] ?? '';
}
