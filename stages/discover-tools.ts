/**
 * Stage: discover tools. Lists the files in every tool_dir that may be tools
 * (.py .ts .js .mjs .yaml .yml) and the support files that travel with them.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, extname, join, relative, sep } from 'node:path';
import { error, warning } from '../runtime/diagnostics.ts';
import ignore, { type Ignore } from 'ignore';
import { closestMatch } from '../runtime/suggest.ts';
import type { SourceKind } from '../runtime/tools/model.ts';
import type { ProjectConfig, ToolDir } from './config/project-config.ts';
import { walkSourceTree } from './source-tree.ts';
import type { StageContext } from './stage.ts';

export interface SourceFile {
  absolute: string;
  /** Relative to the project root, with forward slashes (as agent.json records it). */
  relative: string;
  /** Relative to its tool_dir. */
  withinDir: string;
  /** For messages: relative to the current directory. */
  display: string;
  kind: SourceKind | 'other';
  toolDir: ToolDir;
  /** Set for a tool found in the user or global scope rather than a tool_dir. */
  scope?: 'user' | 'global';
  /** Size and mtime when discovered — before anything read it — for the build cache. */
  stat: { size: number; mtimeMs: number };
  /** sha256 of the content, once a stage has read it. */
  sha256?: string;
  /**
   * The bytes parse-docstrings read (or the build's Python check, which starts first: sourceReader):
   * the stages after it (the PEP 723 block, the copy into the bundle) use these, so a build reads each
   * tool file once and ships the text its spec came from.
   */
  content?: Buffer;
  /** Whether the content holds a PEM private key, once a stage has read it (the secret check reads the rest). */
  privateKey?: boolean;
}

/** A file's bytes: those parse-docstrings read, or read now (a file no stage has read yet: a data file). */
export function sourceBytes(file: Pick<SourceFile, 'absolute' | 'content'>): Buffer {
  return file.content ?? readFileSync(file.absolute);
}

/**
 * A reader of these files' bytes by absolute path, which keeps what it reads as each file's content: the
 * build's Python check, which starts before the docstrings are parsed, reads a file once for both. A path
 * not among them is read as it is.
 */
export function sourceReader(files: readonly SourceFile[]): (path: string) => Buffer {
  const byPath = new Map(files.map((file) => [file.absolute, file]));
  return (path) => {
    const file = byPath.get(path);
    return file ? (file.content ??= readFileSync(path)) : readFileSync(path);
  };
}

const KINDS: Record<string, SourceKind> = { '.py': 'python', '.ts': 'typescript', '.mts': 'typescript', '.js': 'javascript', '.mjs': 'javascript', '.yaml': 'yaml', '.yml': 'yaml' };

/** A directory beside a missing tool dir whose name is close to it (tool_dirs: [tool] beside tools/): did you mean it? */
function nearDirectory(absolute: string, written: string): string | undefined {
  let siblings: string[];
  try {
    siblings = readdirSync(dirname(absolute), { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  } catch {
    return undefined;
  }
  const near = closestMatch(basename(absolute), siblings);
  return near ? `did you mean "${join(dirname(written), near)}"? (that folder is there; or create "${written}")` : undefined;
}

/**
 * The path forge.yaml's `ignore:` patterns are matched against: relative to
 * forge.yaml, or, for a tool dir outside the project (../shared), within
 * that tool dir.
 */
export function ignorePath(file: Pick<SourceFile, 'relative' | 'withinDir'>): string {
  return file.relative.startsWith('../') ? file.withinDir : file.relative;
}

/** forge.yaml's `ignore:` (gitignore syntax), or undefined when it lists nothing. */
function ignoreMatcher(config: ProjectConfig): Ignore | undefined {
  return config.ignore.length ? ignore().add(config.ignore) : undefined;
}

export function discoverTools(config: ProjectConfig, ctx: StageContext): SourceFile[] {
  const files: SourceFile[] = [];
  const ignored = ignoreMatcher(config);
  for (const dir of config.toolDirs) {
    if (!existsSync(dir.absolute) || !statSync(dir.absolute).isDirectory()) {
      if (dir.explicit) {
        ctx.report(warning('FORGE_TOOL_DIR_MISSING', `tool directory "${dir.path}" does not exist`, dir.at, nearDirectory(dir.absolute, dir.path) ?? 'create it, or remove it from tool_dirs'));
      }
      continue;
    }
    const fromRootOf = relativeWithin(config.root, dir.absolute);
    const fromCwdOf = relativeWithin(ctx.cwd, dir.absolute);
    for (const withinDir of walkSourceTree(dir.absolute).files) {
      const absolute = join(dir.absolute, withinDir);
      const fromRoot = fromRootOf(withinDir).split('\\').join('/');
      if (ignored?.ignores(ignorePath({ relative: fromRoot, withinDir }))) continue;
      const display = fromCwdOf(withinDir) || absolute;
      const stat = readableStat(absolute, display, ctx);
      if (!stat) continue;
      const { size, mtimeMs } = stat;
      files.push({
        stat: { size, mtimeMs },
        absolute,
        relative: fromRoot,
        withinDir,
        display,
        kind: KINDS[extname(withinDir)] ?? 'other',
        toolDir: dir,
      });
    }
  }
  return files;
}

/**
 * relative(from, join(dir, withinDir)) for each file of a tool dir: the dir's
 * path from `from`, joined with the file's. path.relative() for every file
 * (three times) made discovery of 200 files ~24 ms slower. When `from` is
 * inside the dir (forge run in a tool folder) a file's path may go back down
 * the way it came up: each is worked out whole.
 */
function relativeWithin(from: string, dir: string): (withinDir: string) => string {
  const dirFrom = relative(from, dir);
  const fromInsideDir = dirFrom === '..' || dirFrom.endsWith(`${sep}..`);
  return fromInsideDir ? (withinDir) => relative(from, join(dir, withinDir)) : (withinDir) => join(dirFrom, withinDir);
}

/** A file's stat, or an error diagnostic when it cannot be read (a link to nothing, a loop of links): never a crash. */
function readableStat(absolute: string, display: string, ctx: StageContext): Stats | undefined {
  try {
    return statSync(absolute);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const target = code === 'ENOENT' || code === 'ELOOP' ? linkTarget(absolute) : undefined;
    const why = target === undefined ? (err as Error).message : code === 'ELOOP' ? `it is a link in a loop of links (${target})` : `it is a link to ${target}, which does not exist`;
    ctx.report(error('FORGE_TOOL_READ', `cannot read ${display}: ${why}`, { file: display }, 'remove the file from the tool directory, or point the link at a file that exists'));
    return undefined;
  }
}

function linkTarget(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
