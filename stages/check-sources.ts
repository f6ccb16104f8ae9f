/**
 * Stage: syntax of the tool sources, before anything runs them. Python with
 * the interpreter the tools use (and their imports against the declared
 * packages, see python/python-source-check.ts); TypeScript and JavaScript
 * with esbuild's parser. `forge validate` runs both; `forge build` checks
 * Python here and leaves TypeScript to the bundler, which reports the same
 * errors with the same locations. A TS/JS text esbuild parsed before is not
 * parsed again (parsed-scripts.ts).
 */
import type { Diagnostic } from '../runtime/diagnostics.ts';
import type { PythonDependencies } from '../runtime/manifest.ts';
import { esbuild } from './esbuild-api.ts';
import { asSyntaxError, fromEsbuildMessage } from './esbuild-messages.ts';
import { sourceBytes, sourceReader, type SourceFile } from './discover-tools.ts';
import { ParsedScripts } from './parsed-scripts.ts';
import { inlinePython } from './python/inline-python.ts';
import { checkPythonSources, type InlinePython, type StartedPythonCheck } from './python/python-source-check.ts';
import type { Project } from './load-project.ts';
import type { StageContext } from './stage.ts';

export interface SourceCheckOptions {
  root: string;
  files: readonly SourceFile[];
  toolDirs: readonly string[];
  dependencies?: PythonDependencies;
  cwd: string;
  scripts: boolean;
  /** The interpreter, if the build started it early on these files or more. */
  pythonStarted?: StartedPythonCheck;
  /** The YAML tools' python: steps, whose imports are checked too. */
  inline?: readonly InlinePython[];
}

export async function checkSources(options: SourceCheckOptions): Promise<Diagnostic[]> {
  const python = options.files.filter(isPythonFile);
  const scripts = options.scripts ? options.files.filter((f) => f.kind === 'typescript' || f.kind === 'javascript') : [];
  const parsed = scripts.length ? ParsedScripts.open(options.root) : undefined;
  const [fromPython, ...fromScripts] = await Promise.all([
    checkPythonSources({ root: options.root, files: python.map((f) => f.absolute), toolDirs: options.toolDirs, dependencies: options.dependencies, cwd: options.cwd, started: options.pythonStarted, inline: options.inline, read: sourceReader(python) }),
    ...(parsed ? scripts.map((f) => parseScript(f, options.cwd, parsed)) : []),
  ]);
  parsed?.save();
  return [...fromPython, ...fromScripts.flat()];
}

/** esbuild's syntax errors in one TS/JS file; none, without asking esbuild, for a text it parsed before (parsed-scripts.ts). */
async function parseScript(file: SourceFile, cwd: string, parsed: ParsedScripts): Promise<Diagnostic[]> {
  const loader = file.kind === 'typescript' ? 'ts' : 'js';
  const content = sourceBytes(file);
  const key = parsed.key(content, loader);
  if (parsed.has(key)) return [];
  try {
    await esbuild.transform(content.toString('utf8'), { loader, sourcefile: file.absolute, format: 'esm', logLevel: 'silent' });
    parsed.add(key);
    return [];
  } catch (err) {
    const failure = err as { errors?: import('esbuild').Message[] };
    if (!failure.errors) throw err;
    return failure.errors.map((m) => asSyntaxError(fromEsbuildMessage(m, 'error', '/', cwd)));
  }
}

/** The stage: the project's own files (not the user or global scope's), reported into ctx. */
export async function checkProjectSources(project: Project, files: readonly SourceFile[], dependencies: PythonDependencies | undefined, ctx: StageContext, options: { scripts: boolean; pythonStarted?: StartedPythonCheck }): Promise<void> {
  const own = ownFiles(files);
  // The YAML tools among these files (a --prod build's, without its dev tools).
  const ownPaths = new Set(own.map((f) => f.absolute));
  const inline = inlinePython(project.tools.filter((t) => t.file && ownPaths.has(t.file.absolute)));
  ctx.report(...(await checkSources({ root: project.config.root, files: own, toolDirs: project.config.toolDirs.map((d) => d.absolute), dependencies, cwd: ctx.cwd, scripts: options.scripts, pythonStarted: options.pythonStarted, inline })));
}

/** The project's own files (not the user or global scope's), once each. */
function ownFiles(files: readonly SourceFile[]): SourceFile[] {
  return [...new Map(files.filter((f) => !f.scope).map((f) => [f.absolute, f])).values()];
}

/** The project's own Python files among those discovered (what the build's check will ask about, or more). */
export function ownPythonFiles(files: readonly SourceFile[]): SourceFile[] {
  return ownFiles(files).filter(isPythonFile);
}

function isPythonFile(f: SourceFile): boolean {
  return f.kind === 'python' || (f.kind === 'other' && f.absolute.endsWith('.py'));
}
