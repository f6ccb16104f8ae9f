/**
 * What the Python source check (python-source-check.ts) found, kept in
 * Forge's machine-wide cache (project-cache.ts) so that a build, `forge
 * tool run` or `forge validate` whose Python files were all checked before
 * starts no interpreter for the check: it was the last thing a cold build
 * of a project with Python tools waited for (about 18 ms of 190 on the
 * bench's 100 Python tools), and a whole interpreter start of `forge tool
 * run`.
 *
 * Filed per project under the compiled CLI's build and the interpreter,
 * named without starting it: its real file's path, size, mtime and inode,
 * and for a project venv the state of its site-packages and pyvenv.cfg (the
 * packages it provides, which the check reads there). Each file's findings
 * (its syntax error, or its absolute imports) are filed under its sha256;
 * an inline `python:` step's under the sha256 of its text. Whether an
 * import is declared is decided from these on every check, as the
 * declarations and the modules beside a tool may have changed.
 *
 * The file stamped is the one PATH or the venv names, and its findings
 * count only when the interpreter reported that very file (its realpath) as
 * sys.executable: a compiled launcher (a mise or rye shim, macOS's xcrun
 * stub) stays the same file while the Python it starts changes, so a check
 * through one is never taken from the cache. An interpreter replaced in
 * place with the same size and mtime is taken for the old one, as the build
 * cache takes such a file.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { pathIdentity } from '../../runtime/file-identity.ts';
import { isRecord } from '../../runtime/is-record.ts';
import { compiledCliBuild, openProjectCache, type ProjectCache } from '../project-cache.ts';

export interface SyntaxFinding {
  msg: string;
  line: number;
  col: number;
  text: string;
}

/** One file's or inline script's findings, as the check script reports them. */
export interface Findings {
  syntax?: SyntaxFinding;
  imports: { name: string; line: number; col: number }[];
}

/** What the check reports of the interpreter itself. */
export interface InterpreterFacts {
  stdlib: string[];
  installed: Record<string, string[]>;
  version: string;
  executable: string;
}

/** An inline script as the check takes it: `id` names it in the check's answer. */
export interface InlineScript {
  id: string;
  text: string;
  syntax: boolean;
}

export interface CheckRequest {
  files: readonly string[];
  inline: readonly InlineScript[];
}

/** What the cache holds for a request, and what the interpreter must still check. */
export interface CacheLookup {
  facts?: InterpreterFacts;
  files: Map<string, Findings>;
  inline: Map<string, Findings>;
  missing: CheckRequest;
  /** Each file's key as read before the check: what it found is filed under these, if the files still hold them. */
  keys: Map<string, string>;
}

/** Entries kept per project past those a command used: every Python file of a large project, and its recent edits. */
const KEPT = 4096;
const FACTS_KEY = 'interpreter';

export class PythonCheckCache {
  private constructor(
    private readonly cache: ProjectCache<Findings | InterpreterFacts>,
    /** The stamped interpreter's real path. */
    private readonly real: string,
  ) {}

  /**
   * The cache for checks of the project at `root` by `executable` (in the project venv at `venvDir`, if
   * given); undefined when the interpreter cannot be named without starting it, or outside the compiled CLI.
   */
  static open(root: string, executable: string, venvDir?: string, cacheDir?: string, cli: string | undefined = compiledCliBuild()): PythonCheckCache | undefined {
    if (cli === undefined) return undefined;
    const stamp = interpreterStamp(executable, venvDir);
    if (stamp === undefined) return undefined;
    const cache = openProjectCache<Findings | InterpreterFacts>('python-check', root, `${cli}|${stamp.stamp}`, { cacheDir, keep: { last: KEPT } });
    return cache && new PythonCheckCache(cache, stamp.real);
  }

  /** Whether a check that reported these facts ran the stamped interpreter itself, not a launcher: only its findings are kept. */
  ranStamped(facts: Pick<InterpreterFacts, 'executable'>): boolean {
    return interpreterStamp(facts.executable)?.real === this.real;
  }

  /** What the cache holds for `request`, its files read with `read` (by default from disk). */
  lookup(request: CheckRequest, read?: (file: string) => Buffer): CacheLookup {
    const facts = this.cache.get(FACTS_KEY);
    const keys = fileKeys(request.files, read);
    const files = new Map<string, Findings>();
    const inline = new Map<string, Findings>();
    const missingFiles: string[] = [];
    const missingInline: InlineScript[] = [];
    for (const file of request.files) {
      const key = keys.get(file);
      const findings = key === undefined ? undefined : this.cache.get(key);
      if (isFindings(findings)) files.set(file, findings);
      else missingFiles.push(file);
    }
    for (const script of request.inline) {
      const findings = this.cache.get(inlineKey(script));
      if (isFindings(findings)) inline.set(script.id, findings);
      else missingInline.push(script);
    }
    return { facts: isFacts(facts) && this.ranStamped(facts) ? facts : undefined, files, inline, missing: { files: missingFiles, inline: missingInline }, keys };
  }

  /**
   * Keeps what a check of `request` found, and writes the cache. A file is filed under the key it had before
   * the check (`keys`: lookup's, or fileKeys'), and only if it still has it on disk: one saved while the
   * interpreter read it may have been checked in either text.
   */
  store(request: CheckRequest, facts: InterpreterFacts, files: ReadonlyMap<string, Findings>, inline: ReadonlyMap<string, Findings>, keys: ReadonlyMap<string, string>): void {
    if (!this.ranStamped(facts)) return;
    this.cache.set(FACTS_KEY, facts);
    for (const file of request.files) {
      const findings = files.get(file);
      const before = keys.get(file);
      if (findings && before !== undefined && fileKey(file) === before) this.cache.set(before, findings);
    }
    for (const script of request.inline) {
      const findings = inline.get(script.id);
      if (findings) this.cache.set(inlineKey(script), findings);
    }
    this.cache.save();
  }
}

// An entry not in the shape a check gives (a cache another program or a torn write left) is checked again.
const isString = (value: unknown): value is string => typeof value === 'string';
const isCount = (value: unknown): value is number => Number.isInteger(value);

function isFindings(value: unknown): value is Findings {
  if (!isRecord(value) || !Array.isArray(value.imports)) return false;
  if (!value.imports.every((imp) => isRecord(imp) && isString(imp.name) && isCount(imp.line) && isCount(imp.col))) return false;
  const syntax = value.syntax;
  return syntax === undefined || (isRecord(syntax) && isString(syntax.msg) && isCount(syntax.line) && isCount(syntax.col) && isString(syntax.text));
}

function isFacts(value: unknown): value is InterpreterFacts {
  if (!isRecord(value) || !isString(value.version) || !isString(value.executable)) return false;
  if (!Array.isArray(value.stdlib) || !value.stdlib.every(isString) || !isRecord(value.installed)) return false;
  return Object.values(value.installed).every((dists) => Array.isArray(dists) && dists.every(isString));
}

/** Each file's key (fileKey), for files that can be read. */
export function fileKeys(files: readonly string[], read?: (file: string) => Buffer): Map<string, string> {
  const keys = new Map<string, string>();
  for (const file of files) {
    const key = fileKey(file, read);
    if (key !== undefined) keys.set(file, key);
  }
  return keys;
}

/** The file's key: the sha256 of its bytes, as `read` gives them (by default, as they are on disk now). */
function fileKey(file: string, read: (file: string) => Buffer = readFileSync): string | undefined {
  try {
    return `file:${createHash('sha256').update(read(file)).digest('hex')}`;
  } catch {
    return undefined;
  }
}

function inlineKey(script: Pick<InlineScript, 'text' | 'syntax'>): string {
  return `inline:${createHash('sha256').update(`${script.syntax ? 1 : 0}\0${script.text}`).digest('hex')}`;
}

/**
 * The interpreter named without starting it (its real path, and the stamp that names its findings), or
 * undefined when its file cannot be read.
 */
export function interpreterStamp(executable: string, venvDir?: string): { real: string; stamp: string } | undefined {
  try {
    const real = realpathSync(executable);
    const parts = [`${real}:${pathIdentity(real)}`];
    if (venvDir !== undefined) {
      parts.push(`pyvenv.cfg:${pathIdentity(join(venvDir, 'pyvenv.cfg'))}`);
      // A package installed, upgraded or removed adds or removes entries in site-packages, and changes its mtime.
      for (const dir of sitePackagesDirs(venvDir)) parts.push(`${dir}:${pathIdentity(dir)}`);
    }
    return { real, stamp: parts.join('|') };
  } catch {
    return undefined;
  }
}

/** lib/pythonX.Y/site-packages (POSIX) and Lib/site-packages (Windows) under a venv: where there is no such folder, its stamp says so. */
function sitePackagesDirs(venvDir: string): string[] {
  const dirs: string[] = [];
  for (const lib of ['lib', 'Lib']) {
    let names: string[];
    try {
      names = readdirSync(join(venvDir, lib));
    } catch {
      continue;
    }
    if (names.includes('site-packages')) dirs.push(join(venvDir, lib, 'site-packages'));
    for (const name of names.sort()) if (name.startsWith('python')) dirs.push(join(venvDir, lib, name, 'site-packages'));
  }
  return dirs;
}
