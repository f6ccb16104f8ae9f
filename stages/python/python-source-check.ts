/**
 * Python sources checked with the interpreter the tools will run with, in one
 * process for all files: compile() finds syntax errors (file:line:col), the
 * ast lists each file's absolute imports. An import that is neither standard
 * library (sys.stdlib_module_names), nor a module beside the tool, nor
 * provided by a declared package is reported where it is written: in the
 * container it would be a ModuleNotFoundError at the first call.
 *
 * Imports guarded by `try: … except ImportError` and `if TYPE_CHECKING:` are
 * optional by construction and not reported. Declared distributions map to
 * import names through the installed metadata when the project venv has
 * them (importlib.metadata.packages_distributions), else by their name.
 *
 * The script imports only C modules (_ast, and CPython's _json accelerator
 * without the json package; importlib.metadata too when it reads a project
 * venv): importing ast and json (with the re, enum and functools they bring)
 * took longer than checking a hundred files, and the check is what a cold
 * build of a project with Python tools waited for last. Another Python falls
 * back to json.
 *
 * What the interpreter found in each file is kept in Forge's cache
 * (python-check-cache.ts): it checks only the files it has not seen, and a
 * check of files it has all seen starts no interpreter.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isDirectory } from '../../runtime/is-directory.ts';
import { basename, dirname, join, relative } from 'node:path';
import { error, warning, type Diagnostic, type Location } from '../../runtime/diagnostics.ts';
import type { PythonDependencies } from '../../runtime/manifest.ts';
import { python3WithoutAsking, resolvePython } from '../../runtime/tools/custom/python-interpreter.ts';
import { guessedImportNames, knownDistributionFor, normalizeDistribution, requirementName } from '../../runtime/tools/custom/python-requirement.ts';
import { type CheckRequest, fileKeys, type Findings, type InterpreterFacts, PythonCheckCache } from './python-check-cache.ts';
import { projectVenvDir, venvPython } from './project-venv.ts';

/** The check itself, run as `python3 -I [-S] -c PYTHON_CHECK_SCRIPT` with its request (JSON) on stdin and its answer (JSON) on stdout. */
export const PYTHON_CHECK_SCRIPT = String.raw`
import sys, _ast
try:
    # CPython's JSON accelerator, without the json package: importing json (and the re, enum and
    # functools it brings) and ast took longer than checking a hundred files.
    from _json import encode_basestring_ascii as quote, make_scanner
    class _Scanning:
        strict = True
        object_hook = object_pairs_hook = parse_constant = None
        parse_float = float
        parse_int = int
    _scan = make_scanner(_Scanning())
    def loads(text):
        return _scan(text, 0)[0]
except (ImportError, TypeError, AttributeError):
    from json import loads
    from json.encoder import encode_basestring_ascii as quote
def dumps(value):
    if isinstance(value, str):
        return quote(value)
    if value is None or value is True or value is False:
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, dict):
        return "{" + ",".join(quote(str(k)) + ":" + dumps(v) for k, v in value.items()) + "}"
    return "[" + ",".join(dumps(v) for v in value) + "]"
req = loads(sys.stdin.read())
stdlib = sorted(getattr(sys, "stdlib_module_names", ())) or sorted(sys.builtin_module_names)
installed = {}
if req["venv"]:
    try:
        from importlib.metadata import packages_distributions
        installed = packages_distributions()
    except Exception:
        pass
OPTIONAL = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
AST = _ast.AST
def children(node):
    for name in node._fields:
        field = getattr(node, name, None)
        if isinstance(field, AST):
            yield field
        elif isinstance(field, list):
            for item in field:
                if isinstance(item, AST):
                    yield item
def mentions(node, word):
    # Any name, attribute or string (bytes too) in the expression: what ast.dump() would show.
    for name in node._fields:
        field = getattr(node, name, None)
        for item in field if isinstance(field, list) else (field,):
            if isinstance(item, str) and word in item or isinstance(item, bytes) and word.encode() in item or isinstance(item, AST) and mentions(item, word):
                return True
    return False
def optional_handler(h):
    if h.type is None:
        return True
    names = h.type.elts if isinstance(h.type, _ast.Tuple) else [h.type]
    return any(isinstance(n, _ast.Name) and n.id in OPTIONAL for n in names)
def walk(node, out, guarded):
    for child in children(node):
        g = guarded
        if isinstance(node, _ast.Try) and child in node.body and any(optional_handler(h) for h in node.handlers):
            g = True
        if isinstance(node, _ast.If) and child in node.body and mentions(node.test, "TYPE_CHECKING"):
            g = True
        if isinstance(child, _ast.Import) and not g:
            for a in child.names:
                out.append({"name": a.name.split(".")[0], "line": child.lineno, "col": child.col_offset + 1})
        elif isinstance(child, _ast.ImportFrom) and not g and child.level == 0 and child.module:
            out.append({"name": child.module.split(".")[0], "line": child.lineno, "col": child.col_offset + 1})
        walk(child, out, g)
results = []
for path in req["files"]:
    entry = {"file": path, "imports": []}
    try:
        with open(path, "rb") as f:
            source = f.read()
        tree = compile(source, path, "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
        compile(tree, path, "exec", dont_inherit=True)
        walk(tree, entry["imports"], False)
    except SyntaxError as e:
        entry["syntax"] = {"msg": e.msg, "line": e.lineno or 1, "col": e.offset or 1, "text": (e.text or "").rstrip("\n")}
    except ValueError as e:
        entry["syntax"] = {"msg": str(e), "line": 1, "col": 1, "text": ""}
    results.append(entry)
# Inline scripts (a YAML tool's python: step), their placeholders stood in for by names: compiled like a file.
# One with a {RAW:...} placeholder may only become Python once the value is in: its syntax is left to its run.
inline = []
for script in req.get("inline", []):
    entry = {"file": script["id"], "imports": []}
    try:
        tree = compile(script["text"], "<python: step>", "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
        if script["syntax"]:
            compile(tree, "<python: step>", "exec", dont_inherit=True)
        walk(tree, entry["imports"], False)
    except SyntaxError as e:
        if script["syntax"]:
            entry["syntax"] = {"msg": e.msg, "line": e.lineno or 1, "col": e.offset or 1, "text": (e.text or "").rstrip("\n")}
    except ValueError:
        pass
    inline.append(entry)
print(dumps({"inline": inline, "stdlib": stdlib, "installed": installed, "version": "%d.%d" % sys.version_info[:2], "executable": sys.executable, "results": results}))
`;

/** The check script's answer: the interpreter's facts, and each file's and inline script's findings (an inline script named by its id). */
interface CheckOutput extends InterpreterFacts {
  /** No syntax error for a script with {RAW:...}: it may only parse once the value is in. */
  inline?: (Findings & { file: string })[];
  results: (Findings & { file: string })[];
}

export interface PythonCheckOptions {
  root: string;
  /** Absolute paths of the Python files to check (tools and their helpers). */
  files: readonly string[];
  /** The tool directories (their modules are importable by every tool). */
  toolDirs: readonly string[];
  dependencies?: PythonDependencies;
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Python written inline in YAML tools (python: steps): their imports are checked as a file's are. */
  inline?: readonly InlinePython[];
  /** How to read a file's bytes for the cache's key (by default from disk): discover-tools.ts's sourceReader, which reads each once. */
  read?: (file: string) => Buffer;
}

export interface InlinePython {
  /** The script as Python reads it (placeholders stood in for by names of their length, so lines and columns hold). */
  text: string;
  /** Where a line and column of `text` are in the YAML file. */
  locate(line: number, column: number): Location;
  /** Whether a syntax error is the script's own: false when a {RAW:...} placeholder may make it Python only once its value is in. */
  checkSyntax: boolean;
}

/** A check whose interpreter was started early (`startPythonCheck`), on these files or more. */
export interface StartedPythonCheck {
  files: ReadonlySet<string>;
  run: Promise<{ python: string; output: CheckOutput | string } | Diagnostic[]>;
}

/**
 * Starts the interpreter on these files now; `checkPythonSources` reads the
 * outcome later. The build starts it as soon as the tool files are found,
 * so the interpreter's start-up overlaps parsing the docstrings rather than
 * following it.
 */
export function startPythonCheck(options: Pick<PythonCheckOptions, 'root' | 'files' | 'env' | 'inline' | 'read'>): StartedPythonCheck {
  const request: CheckRequest = { files: options.files, inline: (options.inline ?? []).map((script, i) => ({ id: String(i), text: script.text, syntax: script.checkSyntax })) };
  const run = (async () => {
    const env = options.env ?? process.env;
    const venvDir = projectVenvDir(options.root);
    const venv = venvPython(venvDir);
    const inVenv = existsSync(venv);
    // One process checks: python3 is run by its name, a shim (pyenv, asdf) included, rather
    // than started once more first to learn the interpreter behind it (resolvePython, which
    // pays off for the many starts of tool processes). It reports sys.executable itself, and
    // that answer is kept for the shim: the next build runs the interpreter directly.
    if (!inVenv && !env.FORGE_PYTHON) {
      const known = python3WithoutAsking(env);
      // A shim asked for the first time (`remember`): what it runs names the cache from the next check on.
      const output = await cachedCheck(options.root, known.executable, undefined, request, env, options.read, known.executable === undefined && known.remember !== undefined);
      if (typeof output === 'object') known.remember?.(output.executable);
      if (output !== NOT_FOUND) return { python: typeof output === 'string' ? known.executable ?? 'python3' : output.executable, output };
    }
    let python: string;
    try {
      python = inVenv ? venv : await resolvePython(env);
    } catch (err) {
      return [warning('FORGE_PY_CHECK', `Python files are not checked: ${(err as Error).message}`, {}, 'install python3, or set FORGE_PYTHON')];
    }
    // FORGE_PYTHON, or a python3 that could not be run and the `python` found instead: a program asked for
    // its interpreter first (resolvePython), whose findings are not kept.
    const output = inVenv ? await cachedCheck(options.root, venv, venvDir, request, env, options.read) : await runCheck(python, false, request, env);
    return { python, output: output === NOT_FOUND ? `${python} was not found` : output };
  })();
  run.catch(() => {});
  return { files: new Set(options.files), run };
}

/**
 * The check of `request` by `python` (a project venv's, with `venvDir`; python3 on PATH by its name when
 * undefined), with what Forge's cache holds for it (python-check-cache.ts): the interpreter checks only the
 * files and scripts the cache has no findings for, and is not started when it has them all. What it finds
 * is kept under `python`, or, `fileUnderReported` (a shim answering for the first time, which the next check
 * will know), under the interpreter it reports; otherwise not at all.
 */
async function cachedCheck(
  root: string,
  python: string | undefined,
  venvDir: string | undefined,
  request: CheckRequest,
  env: NodeJS.ProcessEnv,
  read: ((file: string) => Buffer) | undefined,
  fileUnderReported = false,
): Promise<CheckOutput | string | typeof NOT_FOUND> {
  const cache = python === undefined ? undefined : PythonCheckCache.open(root, python, venvDir);
  const found = cache?.lookup(request, read);
  if (found?.facts && !found.missing.files.length && !found.missing.inline.length) return assemble(request, found.facts, found.files, found.inline);
  const keeping = cache !== undefined || fileUnderReported;
  // The files' keys before the check: what it finds is filed under them, if the files still have them.
  const keys = found?.keys ?? (keeping ? fileKeys(request.files, read) : new Map<string, string>());
  const output = await runCheck(python ?? 'python3', venvDir !== undefined, found?.missing ?? request, env);
  if (typeof output !== 'object') return output;
  const files = new Map(found?.files);
  for (const { file, ...findings } of output.results) files.set(file, findings);
  const inline = new Map(found?.inline);
  for (const { file: id, ...findings } of output.inline ?? []) inline.set(id, findings);
  const facts = { stdlib: output.stdlib, installed: output.installed, version: output.version, executable: output.executable };
  if (keeping) (cache ?? PythonCheckCache.open(root, output.executable, venvDir))?.store(found?.missing ?? request, facts, files, inline, keys);
  return assemble(request, facts, files, inline);
}

/** The check's answer for `request`, in its order, from findings kept and found. */
function assemble(request: CheckRequest, facts: InterpreterFacts, files: ReadonlyMap<string, Findings>, inline: ReadonlyMap<string, Findings>): CheckOutput {
  return {
    ...facts,
    results: request.files.flatMap((file) => (files.has(file) ? [{ file, ...files.get(file)! }] : [])),
    inline: request.inline.flatMap((script) => (inline.has(script.id) ? [{ file: script.id, ...inline.get(script.id)! }] : [])),
  };
}

const NOT_FOUND = Symbol('not found');

/** The check's output, what went wrong (a line), or NOT_FOUND when there is no such program. */
function runCheck(python: string, venv: boolean, request: CheckRequest, env: NodeJS.ProcessEnv): Promise<CheckOutput | string | typeof NOT_FOUND> {
  return new Promise((resolve) => {
    // -S (no site) saves the interpreter's site-packages start-up (.pth files) when nothing there is read: only a project venv's metadata is.
    const isolation = venv ? ['-I'] : ['-I', '-S'];
    const child = execFile(python, [...isolation, '-c', PYTHON_CHECK_SCRIPT], { env: { ...env, PYTHONDONTWRITEBYTECODE: '1' }, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (err, stdout, stderr) => {
      if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT') return resolve(NOT_FOUND);
      if (err) return resolve(String(stderr || err.message).trim().split('\n').slice(-1)[0]);
      try {
        resolve(JSON.parse(stdout) as CheckOutput);
      } catch {
        resolve('unexpected output');
      }
    });
    child.stdin?.on('error', () => {});
    child.stdin?.end(JSON.stringify({ files: request.files, venv, inline: request.inline }));
  });
}

export async function checkPythonSources(options: PythonCheckOptions & { started?: StartedPythonCheck }): Promise<Diagnostic[]> {
  const inline = options.inline ?? [];
  if (!options.files.length && !inline.length) return [];
  // An early start knows only the files (inline scripts are read later, with the YAML tools): those are checked beside it.
  const early = options.started && options.files.every((f) => options.started!.files.has(f)) ? options.started : undefined;
  const [outcome, inlineOutcome] = await Promise.all([(early ?? startPythonCheck(options)).run, early && inline.length ? startPythonCheck({ ...options, files: [] }).run : undefined]);
  const checked = completed(outcome);
  if (Array.isArray(checked)) return checked;
  const inlineChecked = inlineOutcome && completed(inlineOutcome);
  if (Array.isArray(inlineChecked)) return inlineChecked;
  const { python, output: raw } = checked;
  const rawInline = inlineChecked ? inlineChecked.output.inline : raw.inline;
  // An early start may have covered more files (dev tools a --prod build leaves out): report only these.
  const wanted = new Set(options.files);
  const output = { ...raw, results: raw.results.filter((r) => wanted.has(r.file)) };

  const known = new Set(output.stdlib);
  const declared = declaredImports(options.dependencies, output.installed);
  const diagnostics: Diagnostic[] = [];
  const listed = new Map<string, Set<string>>();
  for (const result of output.results) {
    const file = relative(options.cwd, result.file) || result.file;
    if (result.syntax) {
      const s = result.syntax;
      diagnostics.push(error('FORGE_PY_SYNTAX', s.msg, { file, line: s.line, column: s.col, ...(s.text ? { lineText: s.text } : {}) }, `Python ${output.version} (${python}) cannot compile this file`));
      continue;
    }
    const local = localModules([dirname(result.file), ...options.toolDirs], listed);
    let lines: string[] | undefined;
    for (const imp of result.imports) {
      if (known.has(imp.name) || local.has(imp.name) || declared.has(imp.name)) continue;
      // The import's line under the location, as for every other located diagnostic.
      lines ??= sourceLines(result.file);
      const lineText = lines[imp.line - 1];
      diagnostics.push(undeclaredImport(imp.name, { file, line: imp.line, column: imp.col, ...(lineText !== undefined ? { lineText } : {}) }, output.installed, 'a PEP 723 block at the top of the file (# /// script, # dependencies = ["NAME"], # ///) or in requirements.txt'));
    }
  }
  // A YAML tool's python: step has no PEP 723 block of its own: requirements.txt declares for it.
  const everyToolDir = localModules(options.toolDirs, listed);
  for (const result of rawInline ?? []) {
    const script = inline[Number(result.file)];
    if (result.syntax) {
      const s = result.syntax;
      const at = script.locate(s.line, s.col);
      diagnostics.push(
        error('FORGE_PY_SYNTAX', s.msg, at, `Python ${output.version} (${python}) cannot compile this python: step (each {placeholder} read as a name, as a value will stand there); it would fail at every call`),
      );
      continue;
    }
    for (const imp of result.imports) {
      if (known.has(imp.name) || everyToolDir.has(imp.name) || declared.has(imp.name)) continue;
      diagnostics.push(undeclaredImport(imp.name, script.locate(imp.line, imp.col), output.installed, 'requirements.txt beside forge.yaml (a python: step has no # /// script block of its own)'));
    }
  }
  return diagnostics;
}

/** A check that ran, or the warning that says it could not. */
function completed(outcome: Awaited<StartedPythonCheck['run']>): { python: string; output: CheckOutput } | Diagnostic[] {
  if (Array.isArray(outcome)) return outcome;
  const { python, output } = outcome;
  return typeof output === 'string' ? [warning('FORGE_PY_CHECK', `Python files are not checked: ${python} failed: ${output}`)] : { python, output };
}

function sourceLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split(/\r?\n/);
  } catch {
    return [];
  }
}

/** FORGE_PY_IMPORT for `name`, naming the package to declare (`where` says where, NAME standing for it). */
function undeclaredImport(name: string, at: Location, installed: Record<string, string[]>, where: string): Diagnostic {
  // The package to name: the one the project venv says provides it, a known one (yaml → pyyaml), else the import's own name.
  const distribution = installed[name]?.[0] ?? knownDistributionFor(name);
  const which = distribution ? `"${distribution}" (it provides "${name}")` : 'the package that provides it';
  return error('FORGE_PY_IMPORT', `"${name}" is neither in the standard library nor declared`, at, `declare ${which} in ${where.replace('NAME', distribution ?? name)}`);
}

/** Import names the declared packages provide: installed metadata first, then the name itself. */
function declaredImports(deps: PythonDependencies | undefined, installed: Record<string, string[]>): Set<string> {
  const byDistribution = new Map<string, string[]>();
  for (const [importName, dists] of Object.entries(installed)) {
    for (const d of dists) {
      const key = normalizeDistribution(d);
      byDistribution.set(key, [...(byDistribution.get(key) ?? []), importName]);
    }
  }
  const names = new Set<string>();
  for (const requirement of deps?.dependencies ?? []) {
    const dist = requirementName(requirement);
    if (!dist) continue;
    for (const n of byDistribution.get(normalizeDistribution(dist)) ?? guessedImportNames(dist)) names.add(n);
    names.add(dist.replace(/[-.]/g, '_')); // a package named like its module, in any case
  }
  return names;
}

/**
 * Modules importable from these directories: name.py files and package
 * directories. Each directory is listed once per check (`listed`): tools
 * share their directories, and listing them per file is quadratic.
 */
function localModules(dirs: readonly string[], listed: Map<string, Set<string>>): Set<string> {
  const names = new Set<string>();
  for (const dir of new Set(dirs)) {
    let inDir = listed.get(dir);
    if (!inDir) {
      inDir = new Set();
      listed.set(dir, inDir);
      for (const entry of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
        if (entry.name.endsWith('.py')) inDir.add(basename(entry.name, '.py'));
        else if (!entry.name.startsWith('.') && (entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(join(dir, entry.name))))) inDir.add(entry.name);
      }
    }
    for (const name of inDir) names.add(name);
  }
  return names;
}
