/**
 * The Python environment layer, for an agent whose tools declare Python
 * dependencies (agent.json `python.dependencies`). Built without a container:
 * pip on this machine installs wheels for the base image's platform and
 * Python version (--platform, --python-version, --only-binary) into a
 * virtual environment laid out for the image — /opt/forge-venv with a
 * pyvenv.cfg whose home is the base's Python, and bin/python linking to it.
 * The runtime uses it through FORGE_PYTHON.
 *
 * pip takes the user's index and find-links from its own environment
 * (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf). A package with no wheel for the
 * platform cannot be installed this way: the message names the sources pip
 * used (and one it could not reach, when pip said so) and what to do.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { ForgeError } from '../../runtime/diagnostics.ts';
import { resolvePython } from '../../runtime/tools/custom/python-interpreter.ts';
import { distributionKey } from '../../runtime/tools/custom/python-requirement.ts';
import type { BaseImage } from './base-image.ts';
import type { BlobCache } from '../blob-cache.ts';
import { findBasePython } from './base-python.ts';
import { quickPipEnvironment } from '../python/pip-environment.ts';
import { describeSources, pipSources, unreachedNote } from '../python/pip-sources.ts';
import { requirementProblem } from '../python/pep508.ts';
import { writeLayer, type Layer, type LayerEntry } from './layer-writer.ts';
import { ownValue } from '../../runtime/own-value.ts';
import { filesUnder } from '../../runtime/dirent-dir.ts';

const run = promisify(execFile);

export const VENV_DIR = '/opt/forge-venv';

export interface PythonLayer {
  layer: Layer;
  comment: string;
  env: Record<string, string>;
}

const PIP_PLATFORMS: Record<string, string[]> = {
  amd64: ['manylinux_2_28_x86_64', 'manylinux2014_x86_64', 'manylinux_2_17_x86_64', 'linux_x86_64'],
  arm64: ['manylinux_2_28_aarch64', 'manylinux2014_aarch64', 'manylinux_2_17_aarch64', 'linux_aarch64'],
};

export async function pythonLayer(agent: AgentManifest, base: BaseImage, cache: BlobCache, options: { mtime: number; env?: NodeJS.ProcessEnv; log?: (line: string) => void }): Promise<PythonLayer | undefined> {
  const dependencies = agent.python?.dependencies ?? [];
  if (!dependencies.length) return undefined;
  // agent.json may come from elsewhere (--bundle): the build's check is made again before pip reads the list.
  for (const dependency of dependencies) {
    const problem = requirementProblem(dependency);
    if (problem) throw new ForgeError('FORGE_PY_DEPENDENCY', `the bundle's agent.json declares the Python dependency ${JSON.stringify(dependency)}, which is not a PEP 508 requirement pip would read as written: ${problem}`, "rebuild the bundle with forge build --prod: its dependencies come from the tools' # /// script blocks and requirements.txt, which the build checks");
  }
  const python = await findBasePython(base, cache);
  if (!python) {
    throw new ForgeError(
      'FORGE_PACKAGE_BASE',
      `the agent's Python tools need ${dependencies.join(', ')}, but the base image has no Python (no /usr/bin/python3.N or /usr/local/bin/python3.N)`,
      'choose a base with python3 (and node) with --base IMAGE or FORGE_BASE_IMAGE, or build the Dockerfile in the bundle with docker, podman or buildah',
    );
  }
  const platforms = ownValue(PIP_PLATFORMS, base.config.architecture);
  if (!platforms) throw new ForgeError('FORGE_PACKAGE_BASE', `cannot install Python wheels for ${base.config.architecture} from this machine`, 'build the Dockerfile in the bundle with docker, podman or buildah instead');
  const hostPython = await resolvePython(options.env);
  const target = mkdtempSync(join(tmpdir(), 'forge-venv-'));
  try {
    const args = ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--no-compile', '--only-binary=:all:', '--implementation', 'cp', '--python-version', python.version, ...platforms.flatMap((p) => ['--platform', p]), '--target', target, '--', ...dependencies];
    options.log?.(`python: installing ${dependencies.join(', ')} for Python ${python.version} on linux/${base.config.architecture}`);
    const pipEnv = layerPipEnvironment(options.env ?? process.env);
    try {
      // Not -q: pip's "Looking in indexes/links" lines say which sources it used, for the message if it fails.
      await run(hostPython, args, { env: pipEnv, maxBuffer: 16 * 1024 * 1024, timeout: 600_000 });
    } catch (err) {
      const stderr = String((err as { stderr?: string }).stderr ?? '');
      const why = /No matching distribution found for (\S+)/.exec(stderr)?.[1];
      // The sources pip used, as it listed them; "could not reach" only of what pip said it failed to connect to.
      const sources = pipSources(String((err as { stdout?: string }).stdout ?? ''), pipEnv);
      const reach = unreachedNote(stderr, sources);
      // pip's own words only when it did not say which package: they are then the only clue.
      throw new ForgeError(
        'FORGE_PYTHON_DEPS',
        why
          ? `pip could not install the Python dependencies for the image: no wheel of ${why} for linux/${base.config.architecture}, Python ${python.version}${declaredIn(agent, why)} in the sources pip used (${describeSources(sources)})${reach}`
          : `pip could not install the Python dependencies for the image:\n${lastLines(stderr, 6)}`,
        'give pip a source with wheels (PIP_FIND_LINKS=DIR or PIP_INDEX_URL=URL), or build the Dockerfile in the bundle with docker, podman or buildah',
      );
    }
    const sitePackages = `${VENV_DIR}/lib/python${python.version}/site-packages`;
    const home = python.executable.slice(0, python.executable.lastIndexOf('/'));
    const entries: LayerEntry[] = [
      { path: `${VENV_DIR}/pyvenv.cfg`, type: 'file', data: Buffer.from(`home = ${home}\ninclude-system-site-packages = false\nversion = ${python.version}\n`) },
      { path: `${VENV_DIR}/bin/python`, type: 'symlink', linkname: python.executable },
      { path: `${VENV_DIR}/bin/python3`, type: 'symlink', linkname: 'python' },
      { path: `${VENV_DIR}/lib64`, type: 'symlink', linkname: 'lib' },
    ];
    for (const file of walk(target)) {
      const rel = relative(target, file).split(sep).join('/');
      if (rel.startsWith('bin/')) continue; // console scripts carry this machine's interpreter path
      const executable = (statSync(file).mode & 0o111) !== 0;
      entries.push({ path: `${sitePackages}/${rel}`, type: 'file', data: readFileSync(file), mode: executable ? 0o755 : 0o644 });
    }
    const layer = await writeLayer(entries, options.mtime);
    return { layer, comment: `Python environment in ${VENV_DIR}: ${dependencies.join(', ')}`, env: { FORGE_PYTHON: `${VENV_DIR}/bin/python` } };
  } finally {
    rmSync(target, { recursive: true, force: true });
  }
}

/** pip's environment for the layer's install: Forge's quick retries (an unreachable index fails in about a second, not 20), no script-location warnings. */
export function layerPipEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...quickPipEnvironment(env), PIP_NO_WARN_SCRIPT_LOCATION: '1' };
}

/** " (declared in tools/x.py)" for the requirement pip names, as agent.json records where each was declared. */
function declaredIn(agent: AgentManifest, requirement: string): string {
  const declared = agent.python?.declared_in ?? {};
  const name = distributionKey(requirement);
  const files = declared[requirement] ?? Object.entries(declared).find(([r]) => distributionKey(r) === name)?.[1];
  return files?.length ? ` (declared in ${files.join(', ')})` : '';
}

function walk(dir: string): string[] {
  return filesUnder(dir).sort();
}

function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join('\n');
}
