/**
 * The runtime core: Forge's runtime with the builtins, adapter modules and
 * YAML loader an agent enables, as forge-runtime.cjs beside runtime.mjs
 * (which holds the project's own TS tools and starts the core). The core
 * depends on Forge's code and that set only, never on the project, so it is
 * bundled once per machine for each set — as Go builds its standard library
 * once into GOCACHE — and every later build, in any project, takes it from
 * Forge's machine-wide cache (FORGE_CACHE_DIR) after checking its inputs the
 * way the build cache does: a stat each, a hash when a stat changed.
 * Bundling it was about 85 ms of every cold build.
 *
 * The core is kept in Forge's blob store by its digest, with a record per
 * entry (runtime-core/<key>.json), and read back only if it still hashes to
 * that digest; a cache that cannot be read or written costs a bundle, not
 * the build.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildFailure, Message } from 'esbuild';
import { BlobCache, markUsed, removeUnused, sha256Digest, writeFileAtomically } from './blob-cache.ts';
import { type FileStamp, fileUnchanged, stampFile } from './build-cache.ts';
import { BUNDLE_OPTIONS, esbuild } from './esbuild-api.ts';
import { defaultCacheDir, forgeRoot, forgeVersion, runtimeDir } from './forge-paths.ts';
import { pgSplice } from './pg-splice.ts';
import type { ProjectTool } from './project-tool.ts';
import { vendorModules } from './vendor-modules.ts';
import { CORE_FILE } from '../runtime/core-loader.ts';

/** The entries' names for esbuild's messages (they are stdin, not files). */
const ENTRY_NAME = 'forge-runtime-entry.ts';
const BARE_ENTRY_NAME = 'forge-start-entry.ts';
/** Bump when what a cached core means changes without its entry or inputs changing. */
const CORE_FORMAT = 7;

export interface CoreRequest {
  builtins: readonly ProjectTool[];
  adapters: { mcp: boolean; openapi: boolean };
  yamlTools: boolean;
}

/** Code esbuild made (or the cache kept): files for the bundle, and what they were made from. */
export interface BundledCode {
  files: { path: string; contents: Uint8Array }[];
  /** Every file the code was made from (for the project's build cache). */
  inputs: string[];
  warnings: Message[];
}

export interface RuntimeCore extends BundledCode {
  /** Taken from Forge's cache, not bundled. */
  cached: boolean;
  /** runtime.mjs for a project without TS/JS code of its own (startEntry([]) bundled): the core loader and the call that starts it. */
  bareEntry: Uint8Array;
}

export interface BundleFailure {
  errors: Message[];
  warnings: Message[];
}

interface CoreRecord {
  format: number;
  key: string;
  inputs: FileStamp[];
  /** The core's digest in the blob store (sha256:…). */
  core: string;
  /**
   * runtime.mjs for a project without code of its own (RuntimeCore.bareEntry): a few kB, the same for every
   * core, so kept in the record, not as a blob of its own (blobs are removed with the one record that names them).
   * The record holds the core's digest too: it vouches for both.
   */
  bareEntry: string;
  /** Prebuilt modules the core loads: where each goes in the bundle, and the file it is copied from. */
  vendor: { path: string; source: string }[];
}

export interface CoreOptions {
  cacheDir?: string;
  /** false: bundle it even if the cache holds it (--no-cache); the entry is written anew. */
  reuse?: boolean;
  /** When the bundle starts, in ms since the epoch (tests move it). */
  now?: () => number;
}

export async function runtimeCore(request: CoreRequest, options: CoreOptions = {}): Promise<RuntimeCore | BundleFailure> {
  const { cacheDir = defaultCacheDir(), reuse = true, now = Date.now } = options;
  const entry = coreEntry(request);
  const key = createHash('sha256').update(JSON.stringify({ format: CORE_FORMAT, options: CORE_OPTIONS, forge: forgeVersion(), esbuild: esbuild.version, entry })).digest('hex');
  const recordFile = join(cacheDir, 'runtime-core', `${key}.json`);
  const blobs = new BlobCache(cacheDir);
  const cached = reuse ? readCached(recordFile, key, blobs) : undefined;
  if (cached) return cached;

  const vendor = vendorModules();
  const pg = pgSplice();
  const started = now();
  const built = await Promise.all([
    esbuild.build({
      absWorkingDir: forgeRoot,
      stdin: { contents: entry, resolveDir: runtimeDir, sourcefile: ENTRY_NAME, loader: 'ts' },
      outfile: join(forgeRoot, CORE_FILE),
      ...BUNDLE_OPTIONS,
      ...CORE_OPTIONS,
      plugins: [...(vendor ? [vendor.plugin] : []), ...(pg ? [pg.plugin] : [])],
    }),
    esbuild.build({
      absWorkingDir: forgeRoot,
      stdin: { contents: startEntry([]), resolveDir: runtimeDir, sourcefile: BARE_ENTRY_NAME, loader: 'ts' },
      outfile: join(forgeRoot, 'runtime.mjs'),
      ...BUNDLE_OPTIONS,
    }),
  ]).catch((err: BuildFailure) => err);
  if (built instanceof Error) {
    const failure = built as BuildFailure;
    if (!failure.errors) throw failure;
    return { errors: failure.errors, warnings: failure.warnings };
  }
  const [result, bare] = built;
  const text = result.outputFiles[0].text;
  const core = Buffer.from(pg ? pg.splice(text) : text);
  const bareEntry = Buffer.from(bare.outputFiles[0].contents);
  const inputs = [...new Set([...Object.keys(result.metafile.inputs), ...Object.keys(bare.metafile.inputs)])]
    .filter((p) => !p.includes(':') && !p.endsWith(ENTRY_NAME) && !p.endsWith(BARE_ENTRY_NAME))
    .map((p) => join(forgeRoot, p))
    .concat(vendor?.files ?? [], pg?.files ?? []);
  const vendorOutputs = vendor?.outputs() ?? [];
  const files = [{ path: CORE_FILE, contents: core as Uint8Array }, ...vendorOutputs.map((v) => ({ path: v.path, contents: v.contents as Uint8Array }))];

  // An input saved while esbuild read it may not be what the core holds: such a core is used, not cached.
  const stamps = inputs.map((path) => stampFile(path, true));
  if (stamps.every((stamp) => stamp && stamp.mtimeMs < started)) {
    writeCached(blobs, recordFile, core, {
      format: CORE_FORMAT,
      key,
      inputs: stamps as FileStamp[],
      core: sha256Digest(core),
      bareEntry: bareEntry.toString(),
      vendor: vendorOutputs.map((v) => ({ path: v.path, source: v.source })),
    });
  }
  return { files, inputs, warnings: [...result.warnings, ...bare.warnings], cached: false, bareEntry };
}

/**
 * The core is one CommonJS file, not an ES module: runtime.mjs compiles it
 * with V8's code cache (runtime/core-loader.ts), which Node 20 keeps for no
 * ES module, and its imports of Node's modules are plain require() calls
 * (an ES import of a built-in makes Node build a facade that reads every
 * export). Its code's import.meta.url is the core's own file URL, and its
 * import() of a Node module a require(): a script compiled by node:vm has no
 * dynamic import on Node 20 (vm's USE_MAIN_CONTEXT_DEFAULT_LOADER throws
 * there, and warns as experimental on later lines).
 */
const CORE_OPTIONS = {
  format: 'cjs',
  supported: { 'dynamic-import': false },
  banner: { js: 'var __forgeCoreUrl=require("node:url").pathToFileURL(__filename).href;' },
  define: { 'import.meta.url': '__forgeCoreUrl' },
} as const;

/** The core's entry: `start()` runs the runtime with what it was built with and the project's TS tools. */
function coreEntry({ builtins, adapters, yamlTools }: CoreRequest): string {
  const lines = [`import { run } from ${JSON.stringify(join(runtimeDir, 'main.ts'))};`, `import type { CoreCodeCache, ProjectCode } from ${JSON.stringify(join(runtimeDir, 'core-loader.ts'))};`];
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
  const table: string[] = [];
  builtins.forEach((tool, i) => {
    lines.push(`import builtin${i} from ${JSON.stringify(join(runtimeDir, 'tools', tool.builtin!.entry.module))};`);
    table.push(`    ${JSON.stringify(tool.spec.name)}: builtin${i},`);
  });
  lines.push(
    `export function start(project: ProjectCode & { codeCache: CoreCodeCache }) {`,
    `  return run({`,
    `    bundleUrl: project.bundleUrl,`,
    `    codeCache: project.codeCache,`,
    ...(yamlTools ? [`    yamlTools: createYamlToolFactory,`] : []),
    `    builtins: {`,
    ...table,
    `    },`,
    `    nodeTools: project.nodeTools as never,`,
    `    adapters: { ${adapterModules.join(', ')} },`,
    `  });`,
    `}`,
  );
  return lines.join('\n') + '\n';
}

function readCached(recordFile: string, key: string, blobs: BlobCache): RuntimeCore | undefined {
  try {
    const record = JSON.parse(readFileSync(recordFile, 'utf8')) as CoreRecord;
    if (record.format !== CORE_FORMAT || record.key !== key) return undefined;
    if (!record.inputs.every((stamp) => fileUnchanged(stamp, true))) return undefined;
    const core = blobs.get(record.core);
    // The core is code every bundle will run: bytes that are not the recorded ones are never used.
    if (!core || sha256Digest(core) !== record.core || typeof record.bareEntry !== 'string') return undefined;
    const bareEntry = Buffer.from(record.bareEntry);
    const files = [{ path: CORE_FILE, contents: core as Uint8Array }, ...record.vendor.map((v) => ({ path: v.path, contents: readFileSync(v.source) as Uint8Array }))];
    markUsed(recordFile);
    return { files, inputs: record.inputs.map((s) => s.path), warnings: [], cached: true, bareEntry };
  } catch {
    return undefined;
  }
}

function writeCached(blobs: BlobCache, recordFile: string, core: Buffer, record: CoreRecord): void {
  try {
    const replaced = recordedCore(recordFile);
    blobs.put(record.core, core);
    writeFileAtomically(recordFile, JSON.stringify(record));
    // The entry's earlier core (Forge's runtime was edited since) is no one's any more: the cache keeps one core per entry.
    if (replaced && replaced !== record.core) blobs.remove(replaced);
    trimUnused(blobs, recordFile);
  } catch {
    // Without a writable cache, the next build bundles the core again.
  }
}

/** Removes the entries no build used for a while, each with its core. */
function trimUnused(blobs: BlobCache, recordFile: string): void {
  removeUnused(join(recordFile, '..'), '.json', (unused) => {
    const core = recordedCore(unused);
    if (core) blobs.remove(core);
  });
}

function recordedCore(recordFile: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(recordFile, 'utf8')) as CoreRecord).core;
  } catch {
    return undefined;
  }
}

/** runtime.mjs's entry: load the core (runtime/core-loader.ts) and start it with the project's TS tools that export execute(). */
export function startEntry(nodeTools: readonly ProjectTool[]): string {
  const loaders = nodeTools.map((tool) => `    ${JSON.stringify(tool.spec.name)}: () => import(${JSON.stringify(tool.file!.absolute)}),`);
  return [`import { startCore } from ${JSON.stringify(join(runtimeDir, 'core-loader.ts'))};`, `startCore({`, `  bundleUrl: import.meta.url,`, `  nodeTools: {`, ...loaders, `  },`, `});`].join('\n') + '\n';
}
