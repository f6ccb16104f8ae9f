import { readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { PathGuard, PathRefusedError } from '../../guard/path-guard.ts';
import { openForRead } from '../../guard/verified-open.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { fsFailure, guarded, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';
import { SKIPPED_DIRS } from './skipped-dirs.ts';

interface Walk {
  lines: string[];
  directories: number;
  files: number;
  truncated: boolean;
  maxEntries: number;
  guard: PathGuard;
}

export default defineBuiltin({
  spec: {
    name: 'directory_tree',
    description: [
      'Show the tree of files and directories under `path` (default: the working directory), `depth` levels deep (default 3), like the `tree` command: directories first, then files, each sorted by name.',
      `${SKIPPED_DIRS.join(', ')} are shown but not entered (marked "skipped"); symlinks are shown with their target (only when it is inside the working directory) and not followed. At most \`max_entries\` lines (default 500); \`truncated\` says the tree was cut.`,
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        path: { type: 'string', minLength: 1, default: '.', description: 'Directory to show, relative to the working directory.' },
        depth: { type: 'integer', minimum: 1, maximum: 20, default: 3, description: 'How many levels to show.' },
        max_entries: { type: 'integer', minimum: 1, maximum: 10_000, default: 500, description: 'Most entries to show.' },
      },
    },
  },
  create(host) {
    const guard = new PathGuard(host.workDir);
    return {
      async execute(args) {
        const { path, depth, max_entries: maxEntries } = args;
        const base = guarded(guard, path);
        if (isFailure(base)) return base;
        const walk: Walk = { lines: [base.relative === '.' ? './' : `${base.relative}/`], directories: 0, files: 0, truncated: false, maxEntries, guard };
        try {
          await walkDirectory(base.absolute, '', depth, walk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return fail('FORGE_FILE_NOT_DIRECTORY', `"${path}" is not a directory`, 'use file_read to read a file');
          return fsFailure(err, path);
        }
        return ok({ path: base.relative, tree: walk.lines.join('\n'), directories: walk.directories, files: walk.files, truncated: walk.truncated });
      },
    };
  },
});

/** Lists `dir` through a descriptor verified inside the work dir, so a directory swapped for a symlink mid-walk is not listed. */
async function listVerified(dir: string, walk: Walk) {
  const opened = await openForRead(walk.guard, dir, walk.guard.relativeOf(dir), {}, true);
  try {
    if (!opened.info.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    return await readdir(opened.self, { withFileTypes: true });
  } finally {
    await opened.handle.close();
  }
}

/** A symlink's target as shown: only when it stays inside the work dir (an outside target is not disclosed). */
async function shownTarget(link: string, walk: Walk): Promise<string> {
  const target = await readlink(link).catch(() => undefined);
  if (target === undefined) return '?';
  try {
    walk.guard.resolve(link);
    return target;
  } catch (err) {
    // Said as the guard refuses it: into the agent's own state (.forge), or out of the work dir.
    return (err as { code?: string }).code === 'FORGE_PATH_STATE' ? "(the agent's state)" : '(outside the working directory)';
  }
}

async function walkDirectory(dir: string, indent: string, depthLeft: number, walk: Walk): Promise<void> {
  const entries = await listVerified(dir, walk);
  entries.sort((a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const [i, entry] of entries.entries()) {
    if (walk.lines.length > walk.maxEntries) {
      walk.truncated = true;
      return;
    }
    const last = i === entries.length - 1;
    const branch = `${indent}${last ? '└── ' : '├── '}`;
    const childIndent = `${indent}${last ? '    ' : '│   '}`;
    if (entry.isSymbolicLink()) {
      const target = await shownTarget(join(dir, entry.name), walk);
      walk.lines.push(`${branch}${entry.name} -> ${target}`);
      walk.files++;
    } else if (entry.isDirectory()) {
      walk.directories++;
      if (SKIPPED_DIRS.includes(entry.name)) {
        walk.lines.push(`${branch}${entry.name}/ (skipped)`);
      } else {
        walk.lines.push(`${branch}${entry.name}/`);
        if (depthLeft > 1) await walkDirectory(join(dir, entry.name), childIndent, depthLeft - 1, walk).catch((err) => walk.lines.push(`${childIndent}${notListed(err)}`));
      }
    } else {
      walk.files++;
      walk.lines.push(`${branch}${entry.name}`);
    }
  }
}

/** What stands for a directory that cannot be listed: the state dir says why, so nobody asks again. */
function notListed(err: unknown): string {
  return err instanceof PathRefusedError && err.code === 'FORGE_PATH_STATE' ? "(the agent's state: not listed)" : '(unreadable)';
}
