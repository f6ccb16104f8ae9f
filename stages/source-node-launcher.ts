/**
 * Starts TypeScript/JavaScript tools from a project's sources (`forge tool
 * run`, `forge run`): each tool is compiled by esbuild into
 * .forge/cache/tools/ once per content, then run by plain node — never
 * through a TypeScript loader, which costs several times a node start.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildFailure } from 'esbuild';
import { esbuild, REQUIRE_SHIM } from './esbuild-api.ts';
import { formatDiagnostic, type Diagnostic } from '../runtime/diagnostics.ts';
import type { NodeToolLauncher, ProcessCommand } from '../runtime/tools/custom/custom-tool.ts';
import type { ToolSpec } from '../runtime/tools/model.ts';
import { currentStamp, stampFile, type FileStamp } from './build-cache.ts';
import { fromEsbuildError } from './esbuild-messages.ts';
import { forgeVersion, runtimeDir } from './forge-paths.ts';


/** esbuild could not compile a tool (an import that does not resolve, most often): its errors, placed in the files. */
export class ToolCompileError extends Error {
  constructor(message: string, readonly diagnostics: Diagnostic[]) {
    super(message);
  }
}

export function createSourceNodeLauncher(projectRoot: string): NodeToolLauncher {
  const cacheDir = join(projectRoot, '.forge', 'cache', 'tools');
  const compile = async (spec: ToolSpec, mode: 'worker' | 'script'): Promise<ProcessCommand> => {
    const source = join(projectRoot, spec.source!.path);
    const key = createHash('sha256').update(`${forgeVersion()}\0${mode}\0${source}\0${spec.source!.sha256}`).digest('hex').slice(0, 16);
    const outfile = join(cacheDir, `${spec.name}.${mode}.${key}.mjs`);
    const inputsFile = `${outfile}.inputs.json`;
    if (existsSync(outfile) && inputsUnchanged(inputsFile)) return nodeCommand(outfile);

    mkdirSync(cacheDir, { recursive: true });
    const entry =
      mode === 'worker'
        ? {
            stdin: {
              contents: `import { serveToolWorker } from ${JSON.stringify(join(runtimeDir, 'tools/custom/node-worker-host.ts'))};\nserveToolWorker(() => import(${JSON.stringify(source)}));\n`,
              resolveDir: projectRoot,
              loader: 'ts' as const,
              sourcefile: `${spec.name}-worker.ts`,
            },
          }
        : { entryPoints: [source] };
    const result = await esbuild
      .build({
        ...entry,
        absWorkingDir: projectRoot,
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        banner: { js: REQUIRE_SHIM },
        sourcemap: 'inline',
        metafile: true,
        logLevel: 'silent',
      })
      .catch((err: BuildFailure) => err);
    if (result instanceof Error) {
      const diagnostics = ((result as BuildFailure).errors ?? []).map((m) => fromEsbuildError(m, projectRoot, process.cwd()));
      throw new ToolCompileError(diagnostics.map(formatDiagnostic).join('\n') || result.message, diagnostics);
    }
    // Hashed: a file whose stat changes and not its bytes (a touch, a git checkout) keeps the compiled code.
    const inputs = Object.keys(result.metafile.inputs)
      .filter((p) => !p.startsWith('<stdin>'))
      .map((p) => stampFile(join(projectRoot, p), true))
      .filter((s): s is FileStamp => s !== undefined);
    writeFileSync(inputsFile, JSON.stringify(inputs));
    return nodeCommand(outfile);
  };
  return {
    worker: (spec) => compile(spec, 'worker'),
    script: (spec) => compile(spec, 'script'),
  };
}

/**
 * A helper module the tool imports may have changed even when the tool file did not: judged by
 * stat, and by content when the stat changed. Stamps renewed that way are written back, so the
 * next run judges by stat alone.
 */
function inputsUnchanged(inputsFile: string): boolean {
  let inputs: FileStamp[];
  try {
    inputs = JSON.parse(readFileSync(inputsFile, 'utf8')) as FileStamp[];
  } catch {
    return false;
  }
  const current: FileStamp[] = [];
  for (const stamp of inputs) {
    const now = currentStamp(stamp, true);
    if (!now) return false;
    current.push(now);
  }
  if (current.some((now, i) => now !== inputs[i])) {
    try {
      writeFileSync(inputsFile, JSON.stringify(current));
    } catch {
      // read-only: the next run hashes again
    }
  }
  return true;
}

/** Node on a compiled tool, with its inline source map on: a stack trace names the tool's own file and line, not the cache's. */
function nodeCommand(outfile: string): ProcessCommand {
  return { command: process.execPath, args: ['--enable-source-maps', outfile] };
}
