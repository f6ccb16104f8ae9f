/**
 * Stage: bundle the runtime. One esbuild call makes runtime.mjs (the
 * runtime, the enabled builtin tools and every TS/JS tool that exports
 * execute()) and one .mjs per script-style TS/JS tool; the prebuilt
 * libraries the runtime uses go beside it in vendor/ (vendor-modules.ts).
 * Python tools and support files are copied into tools/. Only enabled tools are imported, so
 * a tool that is not in the build (a dev tool under --prod) is not in any file.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { BuildFailure } from 'esbuild';
import { esbuild, REQUIRE_SHIM } from './esbuild-api.ts';
import { vendorModules } from './vendor-modules.ts';
import { pgSplice } from './pg-splice.ts';
import type { ToolSpec } from '../runtime/tools/model.ts';
import type { ProjectConfig } from './config/project-config.ts';
import type { SourceFile } from './discover-tools.ts';
import { fromEsbuildMessage } from './esbuild-messages.ts';
import { runtimeDir } from './forge-paths.ts';
import type { OutputWriter } from './output-writer.ts';
import type { ProjectTool } from './project-tool.ts';
import type { StageContext } from './stage.ts';

export interface BundleOutput {
  /** Tool specs as agent.json records them (source paths point into the bundle). */
  specs: ToolSpec[];
  /** Every file esbuild read, for the build cache. */
  inputs: string[];
}

const ENTRY_FILE = '.forge-runtime-entry.ts';

export async function bundleRuntime(
  config: ProjectConfig,
  tools: readonly ProjectTool[],
  supportFiles: readonly SourceFile[],
  writer: OutputWriter,
  ctx: StageContext,
): Promise<BundleOutput> {
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
  for (const tool of tools) {
    const spec: ToolSpec = { ...tool.spec };
    if (tool.file && spec.source) {
      if (spec.source.kind === 'python' || spec.source.kind === 'yaml') {
        const path = bundlePath(tool.file);
        tool.file.sha256 = writer.write(path, readFileSync(tool.file.absolute)).sha256;
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
  for (const file of supportFiles) {
    const path = bundlePath(file);
    if (!writer.has(path)) file.sha256 = writer.write(path, readFileSync(file.absolute)).sha256;
  }

  // The entry is a real file (its imports resolve like any source file's).
  const entryFile = join(writer.dir, ENTRY_FILE);
  mkdirSync(writer.dir, { recursive: true });
  const adapters = { mcp: config.mcpServers.length > 0, openapi: tools.some((t) => t.spec.adapter?.kind === 'openapi') };
  writeFileSync(entryFile, generateEntry(tools, nodeTools, adapters, specs.some((s) => s.source?.kind === 'yaml')));
  const vendor = vendorModules();
  const pg = pgSplice();
  const result = await esbuild.build({
    absWorkingDir: config.root,
    entryPoints: [{ in: entryFile, out: 'runtime' }, ...scriptEntries],
    outdir: writer.dir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    legalComments: 'eof',
    banner: { js: REQUIRE_SHIM },
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [...(vendor ? [vendor.plugin] : []), ...(pg ? [pg.plugin] : [])],
  }).catch((err: BuildFailure) => err);
  rmSync(entryFile, { force: true });

  if (result instanceof Error) {
    const failure = result as BuildFailure;
    if (!failure.errors) throw failure;
    ctx.report(...failure.errors.map((m) => fromEsbuildMessage(m, 'error', config.root, ctx.cwd)));
    ctx.report(...failure.warnings.map((m) => fromEsbuildMessage(m, 'warning', config.root, ctx.cwd)));
    return { specs, inputs: [] };
  }
  ctx.report(...result.warnings.map((m) => fromEsbuildMessage(m, 'warning', config.root, ctx.cwd)));
  for (const file of result.outputFiles ?? []) {
    const path = relative(writer.dir, file.path).split('\\').join('/');
    if (path !== 'runtime.mjs' || !pg) writer.write(path, file.contents);
    else writer.write(path, pg.splice(file.text));
  }
  for (const module of vendor?.outputs() ?? []) writer.write(module.path, module.contents);
  const inputs = Object.keys(result.metafile?.inputs ?? {})
    .filter((p) => !p.endsWith(ENTRY_FILE) && !p.startsWith('forge-vendor:') && !p.startsWith('forge-pg:'))
    .map((p) => join(config.root, p))
    .concat(vendor?.files ?? [], pg?.files ?? []);
  return { specs, inputs };
}

/**
 * The bundle's entry module: the runtime, the enabled builtins, the TS/JS
 * tools that export execute(), the adapter modules the agent uses (an
 * agent without MCP servers carries none of the MCP SDK), and the YAML tool
 * loader (with its YAML parser) only when there are YAML tools.
 */
function generateEntry(tools: readonly ProjectTool[], nodeTools: readonly ProjectTool[], adapters: { mcp: boolean; openapi: boolean }, yamlTools: boolean): string {
  const lines = [`import { run } from ${JSON.stringify(join(runtimeDir, 'main.ts'))};`];
  if (yamlTools) lines.push(`import { createYamlToolFactory } from ${JSON.stringify(join(runtimeDir, 'tools/yaml/load-yaml-tool.ts'))};`);
  const adapterModules: string[] = [];
  if (adapters.mcp) {
    lines.push(`import * as mcpAdapter from ${JSON.stringify(join(runtimeDir, 'tools', 'adapters', 'mcp', 'index.ts'))};`);
    adapterModules.push('mcp: mcpAdapter');
  }
  if (adapters.openapi) {
    lines.push(`import * as openapiAdapter from ${JSON.stringify(join(runtimeDir, 'tools', 'adapters', 'openapi', 'index.ts'))};`);
    adapterModules.push('openapi: openapiAdapter');
  }
  const builtins: string[] = [];
  tools.forEach((tool, i) => {
    if (!tool.builtin) return;
    lines.push(`import builtin${i} from ${JSON.stringify(join(runtimeDir, 'tools', tool.builtin.entry.module))};`);
    builtins.push(`  ${JSON.stringify(tool.spec.name)}: builtin${i},`);
  });
  const loaders = nodeTools.map((tool) => `  ${JSON.stringify(tool.spec.name)}: () => import(${JSON.stringify(tool.file!.absolute)}),`);
  lines.push(
    `run({`,
    `  bundleUrl: import.meta.url,`,
    ...(yamlTools ? [`  yamlTools: createYamlToolFactory,`] : []),
    `  builtins: {`,
    ...builtins.map((b) => '  ' + b),
    `  },`,
    `  nodeTools: {`,
    ...loaders.map((l) => '  ' + l),
    `  },`,
    `  adapters: { ${adapterModules.join(', ')} },`,
    `});`,
  );
  return lines.join('\n') + '\n';
}
