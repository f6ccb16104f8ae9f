/**
 * `forge tool install`: the tools a source declares, and with `deps` the
 * tools they depend on, fetched from the sources the source names for them,
 * with every version checked against every range that asks for it. The
 * whole set is checked before anything is written: an unsatisfied version
 * or a broken tool file installs nothing.
 *
 * A source declares its tools as the YAML tool files in its tools/ folder
 * (or at its top, when it has none), optionally narrowed and given
 * dependency sources by a forge-tools.yaml (or package.json's "forge" key):
 *
 *   tools: [meta]                  # default: every YAML tool file
 *   sources:                       # where --deps fetches a dependency from
 *     digest: ../digest.git        # a folder, git repository or tarball, relative to this source
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import semver from 'semver';
import { parse } from 'yaml';
import { error, warning, type Diagnostic } from '../../runtime/diagnostics.ts';
import { readYamlToolText } from '../yaml-tool-file.ts';
import { fetchSource, SourceError, type FetchedSource } from './tool-source.ts';

export interface InstalledTool {
  name: string;
  version?: string;
  /** Which source it came from. */
  from: string;
  text: string;
  fileName: string;
}

export interface ExistingTool {
  name: string;
  version?: string;
  where: string;
}

export interface InstallPlan {
  tools: InstalledTool[];
  diagnostics: Diagnostic[];
}

interface SourceManifest {
  tools?: string[];
  /** A Map: a dependency named constructor or __proto__ finds only what sources: gives it. */
  sources: Map<string, string>;
}

interface Dependency {
  name: string;
  range?: string;
  text: string;
}

interface Declared extends InstalledTool {
  dependencies: Dependency[];
  /** Its file, as the source names it (`../src:tools/a.yaml`): two tools of one name may come from one source. */
  file: string;
}

/**
 * `existing`: what is already installed where the tools go and in the
 * scopes searched after it (a dependency found there with a fitting version
 * is not fetched again).
 */
export async function planInstall(source: string, options: { deps: boolean; existing: (name: string) => Promise<ExistingTool | undefined> }): Promise<InstallPlan> {
  const diagnostics: Diagnostic[] = [];
  const planned = new Map<string, Declared>();
  const fetched: FetchedSource[] = [];
  const visited = new Set<string>();

  const visit = async (spec: string, base: string, chain: string[]): Promise<void> => {
    let src: FetchedSource;
    try {
      src = await fetchSource(spec, base);
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      diagnostics.push(error('FORGE_INSTALL_SOURCE', `${chain.length ? `${chain.join(' → ')}: ` : ''}${err.message}`, {}, chain.length ? `fix the source named in forge-tools.yaml${err.hint ? `: ${err.hint}` : ''}` : err.hint));
      return;
    }
    fetched.push(src);
    const manifest = readManifest(src, diagnostics);
    const tools = await readDeclaredTools(src, manifest, diagnostics);
    if (!tools.length && !diagnostics.some((d) => d.severity === 'error')) diagnostics.push(error('FORGE_INSTALL_EMPTY', `${src.label} declares no tools`, {}, 'put YAML tool files in its tools/ folder'));
    for (const tool of tools) {
      const other = planned.get(tool.name);
      if (other && other.text !== tool.text) {
        diagnostics.push(error('FORGE_INSTALL_CONFLICT', `two different tools named "${tool.name}": ${other.file} and ${tool.file}`, {}, 'rename one of them (its name: field, or its file name when it has none)'));
        continue;
      }
      planned.set(tool.name, tool);
    }
    for (const tool of tools) {
      for (const dep of tool.dependencies) await need(dep, [...chain, tool.name], src, manifest);
    }
  };

  const need = async (dep: Dependency, chain: string[], from: FetchedSource, manifest: SourceManifest): Promise<void> => {
    const needed = `${chain.join(' → ')} → ${dep.text}`;
    const fits = (version: string | undefined) => dep.range === undefined || (version !== undefined && semver.satisfies(version, dep.range));
    const shown = (version: string | undefined) => (version ? version : 'no version');
    const inPlan = planned.get(dep.name);
    if (inPlan) {
      if (!fits(inPlan.version)) diagnostics.push(error('FORGE_INSTALL_VERSION', `${needed}: ${inPlan.from} provides ${dep.name} ${shown(inPlan.version)}, which does not satisfy ${dep.range}`, {}, `install a version of ${dep.name} that satisfies ${dep.range}`));
      return;
    }
    const existing = await options.existing(dep.name);
    if (existing && fits(existing.version)) return;
    const sourceOfDep = manifest.sources.get(dep.name);
    if (!options.deps || !sourceOfDep) {
      const why = existing ? `${existing.where} has ${dep.name} ${shown(existing.version)}, which does not satisfy ${dep.range}` : `${dep.name} is not installed`;
      const hint = !sourceOfDep ? `${from.label} names no source for "${dep.name}" (forge-tools.yaml sources:); install it first` : `run with --deps to install it from ${sourceOfDep}`;
      diagnostics.push((existing ? error : options.deps ? error : warning)('FORGE_INSTALL_DEPENDENCY', `${needed}: ${why}`, {}, hint));
      return;
    }
    const key = `${from.base}::${sourceOfDep}`;
    if (visited.has(key)) return;
    visited.add(key);
    await visit(sourceOfDep, from.base, chain);
    const got = planned.get(dep.name);
    if (!got) diagnostics.push(error('FORGE_INSTALL_DEPENDENCY', `${needed}: ${sourceOfDep} does not declare a tool named "${dep.name}"`));
    else if (!fits(got.version)) diagnostics.push(error('FORGE_INSTALL_VERSION', `${needed}: ${sourceOfDep} provides ${dep.name} ${shown(got.version)}, which does not satisfy ${dep.range}`, {}, `point sources: at a version of ${dep.name} that satisfies ${dep.range}`));
  };

  try {
    await visit(source, process.cwd(), []);
  } finally {
    for (const f of fetched) f.cleanup();
  }
  return { tools: [...planned.values()].map(({ dependencies: _d, ...tool }) => tool), diagnostics };
}

function readManifest(src: FetchedSource, diagnostics: Diagnostic[]): SourceManifest {
  const manifest: SourceManifest = { sources: new Map() };
  let data: unknown;
  const file = join(src.dir, 'forge-tools.yaml');
  try {
    if (existsSync(file)) data = parse(readFileSync(file, 'utf8'));
    else if (existsSync(join(src.dir, 'package.json'))) data = (JSON.parse(readFileSync(join(src.dir, 'package.json'), 'utf8')) as { forge?: unknown }).forge;
  } catch (err) {
    diagnostics.push(error('FORGE_INSTALL_MANIFEST', `${src.label}: forge-tools.yaml cannot be read: ${(err as Error).message}`));
    return manifest;
  }
  if (data === undefined || data === null) return manifest;
  if (typeof data !== 'object' || Array.isArray(data)) {
    diagnostics.push(error('FORGE_INSTALL_MANIFEST', `${src.label}: forge-tools.yaml must be a mapping (tools:, sources:)`));
    return manifest;
  }
  const { tools, sources } = data as { tools?: unknown; sources?: unknown };
  if (Array.isArray(tools)) manifest.tools = tools.map(String);
  if (sources && typeof sources === 'object' && !Array.isArray(sources)) for (const [k, v] of Object.entries(sources)) manifest.sources.set(k, String(v));
  return manifest;
}

async function readDeclaredTools(src: FetchedSource, manifest: SourceManifest, diagnostics: Diagnostic[]): Promise<Declared[]> {
  const toolsDir = existsSync(join(src.dir, 'tools')) ? join(src.dir, 'tools') : src.dir;
  const files = readdirSync(toolsDir).filter((n) => /\.ya?ml$/.test(n) && !n.startsWith('.') && !['forge-tools.yaml', 'forge.yaml', 'forge.yml'].includes(n)).sort();
  const out: Declared[] = [];
  for (const fileName of files) {
    if (manifest.tools && !manifest.tools.includes(fileName.replace(/\.ya?ml$/, ''))) continue;
    const { tool, diagnostics: found } = await checkDeclaredTool(src, toolsDir, fileName);
    diagnostics.push(...found);
    if (tool) out.push(tool);
  }
  for (const name of manifest.tools ?? []) {
    if (!files.some((f) => f.replace(/\.ya?ml$/, '') === name)) diagnostics.push(error('FORGE_INSTALL_EMPTY', `${src.label}: forge-tools.yaml lists "${name}", but there is no ${name}.yaml`));
  }
  return out;
}

/** Reads and checks one tool file of a source (the same checks as the build's). */
export async function checkDeclaredTool(src: FetchedSource, toolsDir: string, fileName: string): Promise<{ tool?: Declared; diagnostics: Diagnostic[] }> {
  const stem = fileName.replace(/\.ya?ml$/, '');
  const text = readFileSync(join(toolsDir, fileName), 'utf8');
  const display = `${src.label}:${relative(src.dir, join(toolsDir, fileName))}`;
  const checked = await readYamlToolText(text, display, stem, join(toolsDir, fileName));
  if (!checked.spec) return { diagnostics: checked.diagnostics };
  const { definition } = checked;
  const dependencies: Dependency[] = definition.dependencies.map((d) => ({ name: d.name, ...(d.range ? { range: d.range } : {}), text: d.text }));
  for (const step of definition.toolSteps) if (!dependencies.some((d) => d.name === step.name)) dependencies.push({ name: step.name, text: step.name });
  return {
    tool: { name: checked.spec.name, ...(definition.version ? { version: definition.version } : {}), from: src.label, text, fileName: `${checked.spec.name}.yaml`, dependencies, file: display },
    diagnostics: checked.diagnostics,
  };
}

