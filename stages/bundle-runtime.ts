/**
 * Stage: bundle the runtime. Two parts, made at once: forge-runtime.cjs,
 * Forge's runtime with the enabled builtins (runtime-core.ts: the same for
 * every project with the same set, so usually taken from Forge's cache),
 * and runtime.mjs, the file `node` runs, which holds every TS/JS tool that
 * exports execute() and starts the core; one .mjs per script-style TS/JS
 * tool besides. The prebuilt libraries the core uses go in vendor/
 * (vendor-modules.ts). Python tools and support files are copied into
 * tools/. Only enabled tools are imported, so a tool that is not in the
 * build (a dev tool under --prod) is not in any file.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { BuildFailure } from 'esbuild';
import { BUNDLE_OPTIONS, esbuild } from './esbuild-api.ts';
import { type BundledCode, type BundleFailure, runtimeCore, startEntry } from './runtime-core.ts';
import type { ToolSpec } from '../runtime/tools/model.ts';
import type { ProjectConfig } from './config/project-config.ts';
import { sourceBytes, type SourceFile } from './discover-tools.ts';
import { fromEsbuildError, fromEsbuildMessage } from './esbuild-messages.ts';
import type { OutputWriter } from './output-writer.ts';
import type { ProjectTool } from './project-tool.ts';
import type { StageContext } from './stage.ts';

export interface BundleOutput {
  /** Every file esbuild read, for the build cache. */
  inputs: string[];
  /** The runtime core's files (forge-runtime.cjs, vendor/): the same in every build on this machine with these builtins. */
  coreFiles: string[];
}

const ENTRY_FILE = '.forge-runtime-entry.ts';

/** A bundle under way: the specs are known at once, the files when esbuild is done. */
export interface StartedBundle {
  /** Tool specs as agent.json records them (source paths point into the bundle). */
  specs: ToolSpec[];
  done: Promise<BundleOutput>;
}

/** Starts esbuild (and the core) first, then copies the Python and YAML tools while it works. */
export function bundleRuntime(
  config: ProjectConfig,
  tools: readonly ProjectTool[],
  supportFiles: readonly SourceFile[],
  writer: OutputWriter,
  ctx: StageContext,
  options: { reuseCore?: boolean } = {},
): StartedBundle {
  const multipleDirs = config.toolDirs.length > 1;
  const bundlePath = (file: SourceFile, ext?: string) => {
    // Tools from the user or global scope go under tools/@user/, tools/@global/.
    const prefix = file.scope ? `@${file.scope}/` : multipleDirs ? `${file.toolDir.path.replace(/^(\.\.?\/)+/, '').replace(/\/+$/, '')}/` : '';
    const path = `tools/${prefix}${file.withinDir}`;
    return ext ? path.replace(/\.[^./]+$/, ext) : path;
  };

  const specs: ToolSpec[] = [];
  const nodeTools: ProjectTool[] = [];
  const scriptEntries: { in: string; out: string }[] = [];
  const copies: { path: string; file: SourceFile }[] = [];
  for (const tool of tools) {
    const spec: ToolSpec = { ...tool.spec };
    if (tool.file && spec.source) {
      if (spec.source.kind === 'python' || spec.source.kind === 'yaml') {
        const path = bundlePath(tool.file);
        copies.push({ path, file: tool.file });
        spec.source = { ...spec.source, path };
      } else if (spec.source.style === 'execute') {
        nodeTools.push(tool);
        spec.source = { ...spec.source, path: 'runtime.mjs' };
      } else {
        const path = bundlePath(tool.file, '.mjs');
        scriptEntries.push({ in: tool.file.absolute, out: path.replace(/\.mjs$/, '') });
        spec.source = { ...spec.source, path };
      }
    }
    specs.push(spec);
  }

  // esbuild first: it works in its own process while this thread takes the core from the cache.
  const project = nodeTools.length || scriptEntries.length ? bundleProjectCode(config, nodeTools, scriptEntries, writer.dir) : undefined;
  const core = runtimeCore({
    builtins: tools.filter((t) => t.builtin),
    adapters: { mcp: config.mcpServers.length > 0, openapi: tools.some((t) => t.spec.adapter?.kind === 'openapi') },
    yamlTools: specs.some((s) => s.source?.kind === 'yaml'),
  }, { reuse: options.reuseCore ?? true });
  const done = (async () => {
    for (const { path, file } of copies) file.sha256 = writer.write(path, sourceBytes(file)).sha256;
    for (const file of supportFiles) {
      const path = bundlePath(file);
      if (!writer.has(path)) file.sha256 = writer.write(path, sourceBytes(file)).sha256;
    }
    return finishBundle(config, writer, ctx, await Promise.all([core, project]), project === undefined);
  })();
  return { specs, done };
}

/** esbuild's files written (or its messages reported), once the core and the project's code are made. */
function finishBundle(config: ProjectConfig, writer: OutputWriter, ctx: StageContext, [coreResult, projectResult]: [Awaited<ReturnType<typeof runtimeCore>>, (BundledCode | BundleFailure)?], noProjectCode: boolean): BundleOutput {

  const inputs: string[] = [];
  const coreFiles = 'files' in coreResult ? coreResult.files.map((file) => file.path) : [];
  for (const result of [coreResult, projectResult]) {
    if (!result) continue;
    if ('errors' in result) {
      ctx.report(...result.errors.map((m) => fromEsbuildError(m, config.root, ctx.cwd)));
      ctx.report(...result.warnings.map((m) => fromEsbuildMessage(m, 'warning', config.root, ctx.cwd)));
      continue;
    }
    ctx.report(...result.warnings.map((m) => fromEsbuildMessage(m, 'warning', config.root, ctx.cwd)));
    for (const file of result.files) writer.write(file.path, file.contents);
    inputs.push(...result.inputs);
  }
  if (noProjectCode && 'bareEntry' in coreResult) writer.write('runtime.mjs', coreResult.bareEntry);
  return { inputs, coreFiles };
}

/**
 * runtime.mjs, made from the project's TS/JS tools: the ones that export
 * execute() are imported (each evaluated on first call) and handed to the
 * core; each script-style tool becomes its own .mjs.
 */
async function bundleProjectCode(config: ProjectConfig, nodeTools: readonly ProjectTool[], scriptEntries: { in: string; out: string }[], outDir: string): Promise<BundledCode | BundleFailure> {
  // The entry is a real file (its imports resolve like any source file's).
  const entryFile = join(outDir, ENTRY_FILE);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(entryFile, startEntry(nodeTools));
  const result = await esbuild.build({
    absWorkingDir: config.root,
    entryPoints: [{ in: entryFile, out: 'runtime' }, ...scriptEntries],
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    ...BUNDLE_OPTIONS,
  }).catch((err: BuildFailure) => err);
  rmSync(entryFile, { force: true });
  if (result instanceof Error) {
    const failure = result as BuildFailure;
    if (!failure.errors) throw failure;
    return { errors: failure.errors, warnings: failure.warnings };
  }
  return {
    files: result.outputFiles.map((file) => ({ path: relative(outDir, file.path).split('\\').join('/'), contents: file.contents })),
    inputs: Object.keys(result.metafile.inputs)
      .filter((p) => !p.endsWith(ENTRY_FILE))
      .map((p) => join(config.root, p)),
    warnings: result.warnings,
  };
}
