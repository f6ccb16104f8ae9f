/**
 * Hot reload and helper modules: the .py and .ts/.js files in tool_dirs
 * that are no tool, imported by tools (tools/helpers.py,
 * tools/text-utils.ts). A saved helper is compiled as a tool file is (what
 * `forge validate` runs): while it does not compile, the tools that import
 * it — directly or through other helpers — are unavailable with its located
 * diagnostic, instead of being reloaded as if all were well and failing at
 * their next call with a traceback. Fixing it makes them again.
 *
 * Who imports what is read from the import lines (Python's `import` and
 * `from ... import`, JavaScript's `import`/`export ... from`, `import()` and
 * `require()` with a relative path): enough to name the tools a broken
 * helper takes down, without running any of them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import type { Diagnostic } from '../runtime/diagnostics.ts';
import { checkSources } from '../stages/check-sources.ts';
import type { SourceFile } from '../stages/discover-tools.ts';
import type { Project } from '../stages/load-project.ts';
import { walkSourceTree } from '../stages/source-tree.ts';

const PYTHON = new Set(['.py']);
const SCRIPT = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);
/** The compiler errors that make a file unloadable (the same as for a tool file). */
const SYNTAX_CODES = new Set(['FORGE_PY_SYNTAX', 'FORGE_SYNTAX']);

export function isCodeFile(path: string): boolean {
  return codeLanguage(path) !== undefined;
}

/** The language a code file is in (node: TypeScript or JavaScript), or undefined for any other file. */
export function codeLanguage(path: string): 'python' | 'node' | undefined {
  const ext = extname(path);
  return PYTHON.has(ext) ? 'python' : SCRIPT.has(ext) ? 'node' : undefined;
}

/**
 * Compiles the helpers saved (`changed`) and those that did not compile last
 * time, keeping in `broken` each one that does not, with its errors. Returns
 * the errors of the saved ones, to print (a helper still broken is not
 * reported again at every save of another file).
 */
export async function checkHelpers(broken: Map<string, Diagnostic[]>, project: Project, changed: readonly string[]): Promise<Diagnostic[]> {
  const files: SourceFile[] = [];
  for (const path of new Set([...changed, ...broken.keys()])) {
    if (existsSync(path)) files.push(asSourceFile(path, project));
    else broken.delete(path);
  }
  const found = await syntaxErrors(project, files);
  const reported: Diagnostic[] = [];
  for (const file of files) {
    const errors = found.get(file.absolute) ?? [];
    if (errors.length) broken.set(file.absolute, errors);
    else broken.delete(file.absolute);
    if (changed.includes(file.absolute)) reported.push(...errors);
  }
  return reported;
}

/** The compiler errors (what `forge validate` runs) of each of `files` that does not compile, by absolute path. */
export async function syntaxErrors(project: Project, files: readonly SourceFile[]): Promise<Map<string, Diagnostic[]>> {
  const byFile = new Map<string, Diagnostic[]>();
  if (!files.length) return byFile;
  const diagnostics = await checkSources({ root: project.config.root, files, toolDirs: project.config.toolDirs.map((d) => d.absolute), cwd: process.cwd(), scripts: true });
  for (const file of files) {
    const errors = diagnostics.filter((d) => SYNTAX_CODES.has(d.code) && d.file !== undefined && [file.absolute, file.display, file.relative].includes(d.file));
    if (errors.length) byFile.set(file.absolute, errors);
  }
  return byFile;
}

/**
 * The tool files that import a broken helper, directly or through other
 * code files in tool_dirs, each with the errors of the helper(s) it needs.
 */
export function filesNeedingBrokenHelpers(broken: ReadonlyMap<string, Diagnostic[]>, project: Project): Map<string, Diagnostic[]> {
  const needing = new Map<string, Diagnostic[]>();
  if (!broken.size) return needing;
  const toolDirs = project.config.toolDirs.map((d) => d.absolute);
  const imports = new Map(codeFilesIn(toolDirs).map((file) => [file, importedFiles(file, toolDirs)] as const));
  for (const [file, errors] of broken) needing.set(file, errors);
  // Until no file is added: a helper importing a broken helper is as broken for whoever imports it.
  for (let grew = true; grew; ) {
    grew = false;
    for (const [file, targets] of imports) {
      if (needing.has(file)) continue;
      const errors = targets.flatMap((t) => needing.get(t) ?? []);
      if (!errors.length) continue;
      needing.set(file, [...new Set(errors)]);
      grew = true;
    }
  }
  for (const file of broken.keys()) needing.delete(file);
  return needing;
}

function asSourceFile(absolute: string, project: Project): SourceFile {
  const toolDir = project.config.toolDirs.find((d) => absolute.startsWith(d.absolute + sep)) ?? project.config.toolDirs[0];
  const ext = extname(absolute);
  return {
    absolute,
    relative: relative(project.config.root, absolute).split(sep).join('/'),
    withinDir: relative(toolDir.absolute, absolute).split(sep).join('/'),
    display: relative(process.cwd(), absolute) || absolute,
    kind: PYTHON.has(ext) ? 'python' : ext.endsWith('ts') ? 'typescript' : 'javascript',
    toolDir,
  } as SourceFile;
}

/** The code files in tool_dirs, by the walk tool discovery makes (source-tree.ts). */
function codeFilesIn(dirs: readonly string[]): string[] {
  return dirs.flatMap((dir) => walkSourceTree(dir).files.map((file) => join(dir, file)).filter(isCodeFile));
}

/** The code files in tool_dirs a file imports, as far as its import lines tell. */
function importedFiles(file: string, toolDirs: readonly string[]): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return PYTHON.has(extname(file)) ? pythonImports(text, file, toolDirs) : scriptImports(text, file);
}

/**
 * `import a.b`, `from a import b`: each name resolved beside the file and from each tool_dir (the tools' path).
 * `from .a import b`, `from .. import b`: as Python resolves them, from the file's package (its folder) for
 * one dot and from one folder further up for each dot after it.
 */
function pythonImports(text: string, file: string, toolDirs: readonly string[]): string[] {
  const modules: { name: string; level: number }[] = [];
  for (const [, from, names] of text.matchAll(/^[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]+\(?([^)\n]*)/gm)) {
    const base = from.replace(/^\.+/, '');
    const level = from.length - base.length;
    // The package named (for `from .. import b`, the package the dots name) is imported first: its __init__.py.
    if (base || level) modules.push({ name: base, level });
    for (const name of names.split(',').map((n) => n.trim().split(/\s+/)[0]).filter(Boolean)) modules.push({ name: base ? `${base}.${name}` : name, level });
  }
  for (const [, names] of text.matchAll(/^[ \t]*import[ \t]+([\w., \t]+)$/gm)) {
    for (const name of names.split(',').map((n) => n.trim().split(/\s+/)[0]).filter(Boolean)) modules.push({ name, level: 0 });
  }
  const roots = (level: number) => (level ? [resolve(dirname(file), ...Array<string>(level - 1).fill('..'))] : [dirname(file), ...toolDirs]);
  return modules.flatMap(({ name, level }) => roots(level).flatMap((root) => {
    if (!name) return [join(root, '__init__.py')];
    const path = join(root, ...name.split('.'));
    return [`${path}.py`, join(path, '__init__.py')];
  }));
}

/** Relative specifiers of import/export-from, import() and require(), with the extensions a bundler tries. */
function scriptImports(text: string, file: string): string[] {
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]);
  return specifiers.flatMap((specifier) => {
    const path = resolve(dirname(file), specifier);
    const stem = path.replace(/\.(m|c)?js$/, '');
    return [path, ...[...SCRIPT].map((ext) => `${stem}${ext}`), ...[...SCRIPT].map((ext) => join(path, `index${ext}`))];
  });
}
