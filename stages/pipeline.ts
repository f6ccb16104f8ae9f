/**
 * `forge build`: the pipeline, in order, in one place.
 *
 *   load config → discover tools → parse docstrings (meanwhile: discover
 *   adapters — MCP servers, OpenAPI specs) → annotate categories
 *   → check schemas → filter (--prod strips dev tools) → check approval rules
 *   → check secret files
 *   → pin MCP packages
 *   → emit agent.json → emit Dockerfile → emit k8s/ → bundle runtime
 *   → emit build-manifest.json + checksums.json → emit archive → check sources
 *
 * Two stages work in processes of their own and are awaited where their
 * results are needed: esbuild bundles from the filter on, while the manifests
 * are written; Python's check runs from discovery on, and its verdict is
 * awaited last.
 *
 * Like esbuild's build(): one options object in, one result out, with errors
 * and warnings as data. Stages write into a staging directory that replaces
 * the output directory only when the whole build succeeded, so a failed
 * build leaves the previous output as it was.
 */
import { removeOnInterrupt, removeStaleStaging } from './remove-on-interrupt.ts';
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { error, warning, type Diagnostic } from '../runtime/diagnostics.ts';
import type { Category } from '../runtime/tools/model.ts';
import { cacheFile, cacheKey, stampDirectories, stampFile, writeCacheRecord, type CacheRecord, type FileStamp } from './build-cache.ts';
import { bundleRuntime, type BundleOutput } from './bundle-runtime.ts';
import { archiveName, emitArchive } from './emit-archive.ts';
import { emitBuildManifest, emitChecksums } from './emit-checksums.ts';
import { emitContainer } from './emit-container.ts';
import { emitKubernetes } from './emit-kubernetes.ts';
import { categoryCounts, createManifest, emitManifest } from './emit-manifest.ts';
import { filterTools } from './filter-tools.ts';
import { defaultCacheDir, forgeRoot, templatesDir } from './forge-paths.ts';
import { checkSchemas } from './check-schemas.ts';
import { checkSecretFiles } from './check-secret-files.ts';
import { checkApprovalRules } from './check-approval-rules.ts';
import { loadEsbuild, warmUpEsbuild } from './esbuild-api.ts';
import { loadProject, type ProjectOptions } from './load-project.ts';
import { sourceReader } from './discover-tools.ts';
import { OutputWriter } from './output-writer.ts';
import { signChecksums } from './sign-checksums.ts';
import { pythonDependencies, PYTHON_REQUIREMENTS_FILE } from './python/python-dependencies-stage.ts';
import { requirementsText } from './python/python-dependencies.ts';
import { checkProjectSources, ownPythonFiles } from './check-sources.ts';
import { startPythonCheck, type StartedPythonCheck } from './python/python-source-check.ts';
import { pinMcpPackages } from './adapters/pin-mcp-packages.ts';
import { BuildStopped, runStage, StageContext, type StageTiming } from './stage.ts';
import { filesUnder } from '../runtime/dirent-dir.ts';

export const DEFAULT_OUT_DIR = '.forge-output';

export interface BuildOptions extends ProjectOptions {
  cwd?: string;
  prod?: boolean;
  /** Output directory, relative to the project root (default .forge-output). */
  outDir?: string;
  /** Do not reach MCP servers or fetch specs: build from what the last build recorded in agent.json. */
  offline?: boolean;
  /** --sign KEY: an Ed25519 private key (PEM file) that signs checksums.json. */
  signKey?: string;
  /** --no-cache: bundle the runtime core too, instead of taking it from Forge's cache (the entry is written anew). */
  noCache?: boolean;
}

export interface BuildSummary {
  agentId: string;
  version: string;
  mode: 'prod' | 'dev';
  tools: { total: number; byCategory: Record<Category, number>; strippedDevTools: string[] };
  outDir: string;
  artifacts: { path: string; size: number }[];
  egress: { mode: string; allowedDomains: string[]; allowedAddresses?: string[] };
}

export interface BuildResult {
  ok: boolean;
  cached: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
  summary?: BuildSummary;
  timings: StageTiming[];
}

export async function build(options: BuildOptions = {}): Promise<BuildResult> {
  loadEsbuild();
  const ctx = new StageContext(options.cwd ?? process.cwd());
  const prod = options.prod ?? false;
  let staging: string | undefined;
  let bundling: Promise<BundleOutput> | undefined;
  let writer: OutputWriter | undefined;
  let reportSourceCheck: (() => Promise<void>) | undefined;
  let previous: string | undefined;
  // Ctrl-C mid-build: the staging directory (or the old output being deleted) goes with the process.
  const disarm = removeOnInterrupt(() => [staging, previous]);
  try {
    let pythonStarted: StartedPythonCheck | undefined;
    const project = await loadProject(
      { ...options, adapters: options.offline ? 'offline' : 'live', recordedManifest: join(options.outDir ?? DEFAULT_OUT_DIR, 'agent.json') },
      ctx,
      {
        checkSchemas: false,
        // The interpreter starts while the docstrings are parsed; check-sources reads its answer.
        onDiscovered: (config, files) => {
          // Python first: its check, not esbuild, is what a build with many Python tools waits for last,
          // and esbuild's warm-up (loading its API, starting its service) took 7-16 ms before it.
          const python = ownPythonFiles(files);
          if (python.length) pythonStarted = startPythonCheck({ root: config.root, files: python.map((f) => f.absolute), read: sourceReader(python) });
          // esbuild bundles the project's TS/JS tools (the runtime core usually comes from Forge's cache).
          if (files.some((f) => f.kind === 'typescript' || f.kind === 'javascript')) warmUpEsbuild();
        },
      },
    );
    const { config } = project;
    const outDir = resolve(config.root, options.outDir ?? DEFAULT_OUT_DIR);
    const sourceDateEpoch = readSourceDateEpoch(ctx);

    // Filtering is a pure function of the tool list, so it is decided here and
    // reported in its place below.
    const selected = filterTools(project.tools, { prod });
    const strippedFiles = new Set(selected.stripped.map((t) => t.file?.absolute).filter(Boolean));
    const supportFiles = project.supportFiles.filter((f) => !strippedFiles.has(f.absolute));

    checkOutDir(outDir, config.root, config.toolDirs.map((d) => d.absolute), ctx);
    removeStaleStaging(outDir);
    staging = join(dirname(outDir), `.${basename(outDir)}.staging-${process.pid}`);
    rmSync(staging, { recursive: true, force: true });
    const output = new OutputWriter(staging);
    writer = output;

    // esbuild works in its own process: start it, then check the schemas on
    // this thread while it bundles. The phase gate still holds: if the check
    // fails, nothing esbuild made is used.
    const bundleStarted = performance.now();
    const started = bundleRuntime(config, selected.tools, supportFiles, output, ctx, { reuseCore: !options.noCache });
    bundling = started.done;
    bundling.catch(() => {});
    const python = await runStage(ctx, 'python-dependencies', () => pythonDependencies(config.root, selected.tools, ctx));
    // The Python check runs in its own process too, meanwhile. It may outlast the bundle: the
    // output is then made meanwhile, in the staging directory, and used only if the check passes.
    const checkStarted = performance.now();
    const checked = new StageContext(ctx.cwd, false);
    const sourceFiles = [...selected.tools.flatMap((t) => (t.file ? [t.file] : [])), ...supportFiles];
    const checkingSources = checkProjectSources(project, sourceFiles, python.dependencies, checked, { scripts: false, pythonStarted });
    checkingSources.catch(() => {});
    /** The check's findings, reported once: in its stage, or beside the errors of a stage that stopped the build first. */
    reportSourceCheck = once(async () => {
      await checkingSources;
      ctx.report(...checked.diagnostics);
    });
    const pinning = pinMcpPackages(project.adapters.mcpServers, config.root);
    pinning.catch(() => {});
    await runStage(ctx, 'check-schemas', () => checkSchemas(project.tools, ctx));
    await runStage(ctx, 'filter-tools', () => {
      ctx.report(...selected.problems);
      return selected;
    });
    // Against every tool, dev ones too: a rule for a tool --prod strips is no typo.
    await runStage(ctx, 'check-approval-rules', () => ctx.report(...checkApprovalRules(config, project.tools)));
    await runStage(ctx, 'check-secret-files', () => ctx.report(...checkSecretFiles(sourceFiles, new Set(selected.tools.flatMap((t) => (t.file ? [t.file] : []))), prod, config.notSecrets)));
    const mcpServers = await runStage(ctx, 'pin-mcp-packages', async () => {
      const pinned = await pinning;
      ctx.report(...pinned.diagnostics);
      return pinned.servers;
    });
    // The manifest needs the specs, not esbuild's files: agent.json, the Dockerfile and k8s/ are
    // written while it bundles (into staging, used only if the bundle succeeds too).
    const manifest = createManifest(config, started.specs, prod, { ...project.adapters, mcpServers });
    if (python.dependencies) {
      manifest.python = python.dependencies;
      output.write(PYTHON_REQUIREMENTS_FILE, requirementsText(python.dependencies));
    }
    await runStage(ctx, 'emit-manifest', () => emitManifest(manifest, output));
    await runStage(ctx, 'emit-container', () => emitContainer(manifest, output));
    await runStage(ctx, 'emit-kubernetes', () => emitKubernetes(manifest, output));
    const bundle = await runStage(ctx, 'bundle-runtime', () => bundling!, bundleStarted);
    await runStage(ctx, 'emit-checksums', () => {
      emitBuildManifest({ manifest, strippedDevTools: selected.stripped.length, sourceDateEpoch }, output);
      emitChecksums(output);
    });
    if (options.signKey) await runStage(ctx, 'sign-checksums', () => signChecksums(resolve(ctx.cwd, options.signKey!), output, ctx));
    await runStage(ctx, 'emit-archive', () => emitArchive(archiveName(config.agentId, config.version), output, sourceDateEpoch, { shared: bundle.coreFiles, cacheDir: defaultCacheDir(), reuse: !options.noCache }));
    await runStage(ctx, 'check-sources', reportSourceCheck, checkStarted);

    await output.flush();
    // Swap the new output in; the old one is deleted while the cache record is written.
    previous = existsSync(outDir) ? `${staging}.previous` : undefined;
    if (previous) renameSync(outDir, previous);
    renameSync(staging, outDir);
    staging = undefined;
    const removingPrevious = previous ? rm(previous, { recursive: true, force: true }) : Promise.resolve();

    const summary: BuildSummary = {
      agentId: config.agentId,
      version: config.version,
      mode: prod ? 'prod' : 'dev',
      tools: { total: manifest.tools.length, byCategory: categoryCounts(manifest), strippedDevTools: selected.stripped.map((t) => t.spec.name) },
      outDir,
      artifacts: output.list().map(({ path, size }) => ({ path, size })),
      egress: { mode: manifest.egress.mode, allowedDomains: manifest.egress.allowed_domains, allowedAddresses: manifest.egress.allowed_addresses ?? [] },
    };

    const built = result(ctx, true, summary);
    const key = cacheKey(config.file, outDir, prod);
    // Discovered files are stamped with the stat taken before they were read and
    // the hash of what was read: a file edited during the build looks changed next time.
    const discovered: FileStamp[] = project.files.map((f) => ({ path: f.absolute, ...f.stat, ...(f.sha256 ? { sha256: f.sha256 } : {}) }));
    const known = new Set(discovered.map((s) => s.path));
    const inputs = new Set<string>([config.file, ...bundle.inputs, ...python.inputs, ...project.adapters.files, ...forgeOwnFiles()].filter((p) => !known.has(p)));
    const record: CacheRecord<BuildSummary> = {
      format: 1,
      key,
      // Project files are hashed (an editor may rewrite them unchanged); Forge's
      // own files and installed packages are trusted by their stat.
      inputs: [...discovered, ...[...inputs].map((p) => stampFile(p, isProjectFile(p, config.root))).filter((s): s is FileStamp => s !== undefined)],
      directories: [...config.toolDirs.map((d) => d.absolute), ...project.scopeDirs].flatMap((dir) => stampDirectories(dir)),
      outputs: output.list().map((a) => stampFile(join(outDir, a.path), false)).filter((s): s is FileStamp => s !== undefined),
      summary,
      ...(built.warnings.length ? { warnings: built.warnings } : {}),
      ...(project.adapters.live.length ? { live: project.adapters.live } : {}),
    };
    writeCacheRecord(cacheFile(config.root, key), record);
    await removingPrevious;
    previous = undefined;
    return built;
  } catch (err) {
    if (!(err instanceof BuildStopped)) throw err;
    // Python's errors and the bundler's come from one run, as a user fixing them would want.
    await reportSourceCheck?.().catch(() => {});
    return result(ctx, false);
  } finally {
    // esbuild and the writer may still be writing into the staging directory.
    await bundling?.catch(() => {});
    await writer?.flush().catch(() => {});
    if (staging) rmSync(staging, { recursive: true, force: true });
    disarm();
  }
}

/** `work` run on the first call; every call gets its one promise. */
function once<T>(work: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => (running ??= work());
}

function result(ctx: StageContext, ok: boolean, summary?: BuildSummary): BuildResult {
  return {
    ok,
    cached: false,
    errors: ctx.diagnostics.filter((d) => d.severity === 'error'),
    warnings: ctx.diagnostics.filter((d) => d.severity === 'warning'),
    summary,
    timings: ctx.timings,
  };
}

/** Refuses to replace a directory that Forge did not create (the user's files would be lost). */
function checkOutDir(outDir: string, root: string, toolDirs: readonly string[], ctx: StageContext) {
  // The output directory is replaced wholesale, so it must not be (or hold) the project.
  const fromOut = relative(outDir, root);
  if (fromOut === '' || !fromOut.startsWith('..')) {
    ctx.report(error('FORGE_OUT_DIR', `the output directory ${outDir} contains the project itself`, {}, 'choose an output directory inside the project, such as .forge-output'));
    throw new BuildStopped('check-output');
  }
  // Nor be in a tool directory, or hold one: the next build would find the bundle's copies as tools (or replace the tools).
  const toolDir = toolDirs.find((dir) => isWithin(outDir, dir) || isWithin(dir, outDir));
  if (toolDir) {
    ctx.report(error('FORGE_OUT_DIR', `the output directory ${relative(ctx.cwd, outDir) || outDir} overlaps the tool directory ${relative(ctx.cwd, toolDir) || toolDir}`, {}, 'choose an output directory outside tool_dirs, such as .forge-output'));
    throw new BuildStopped('check-output');
  }
  if (!existsSync(outDir)) return;
  if (!statSync(outDir).isDirectory()) {
    ctx.report(error('FORGE_OUT_DIR', `the output directory ${relative(ctx.cwd, outDir) || outDir} is a file`, {}, 'pass --out with a directory, such as .forge-output'));
    throw new BuildStopped('check-output');
  }
  const entries = readdirSync(outDir);
  if (entries.length === 0 || entries.includes('build-manifest.json')) return;
  ctx.report(error('FORGE_OUT_DIR', `${relative(ctx.cwd, outDir) || outDir} exists and was not made by forge build`, {}, 'remove it, or pass --out with another directory'));
  throw new BuildStopped('check-output');
}

/** `path` is `dir` or inside it. */
function isWithin(path: string, dir: string): boolean {
  const fromDir = relative(dir, path);
  return fromDir === '' || (!fromDir.startsWith('..') && !isAbsolute(fromDir));
}

function readSourceDateEpoch(ctx: StageContext): number | undefined {
  const raw = process.env.SOURCE_DATE_EPOCH;
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) {
    ctx.report(warning('FORGE_SOURCE_DATE_EPOCH', `SOURCE_DATE_EPOCH="${raw}" is not a number of seconds; ignoring it`));
    return undefined;
  }
  return Number(raw);
}

function isProjectFile(path: string, root: string): boolean {
  const rel = relative(root, path);
  return !rel.startsWith('..') && !rel.split(sep).includes('node_modules');
}

/** Forge's own code and templates: a different Forge must not reuse another's build. */
function forgeOwnFiles(): string[] {
  const here = fileURLToPath(import.meta.url);
  const files: string[] = [join(forgeRoot, 'package.json')];
  // Compiled, Forge's code is dist/, which scripts/build-cli.mjs always writes
  // whole: the CLI's file (this one) and the fast path's stand for it. From
  // sources, each stage counts.
  const compiled = basename(dirname(here)) === 'dist';
  if (compiled) files.push(here, join(dirname(here), 'forge-fast.cjs'));
  for (const dir of compiled ? [join(templatesDir, 'bundle')] : [dirname(here), join(templatesDir, 'bundle')]) {
    files.push(...filesUnder(dir));
  }
  return files;
}
