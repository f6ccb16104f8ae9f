import fg from 'fast-glob';
import { lstat } from 'node:fs/promises';
import { PathGuard } from '../../guard/path-guard.ts';
import { lookThroughVerifiedDirectories } from '../../guard/verified-entries.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { guarded, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';
import { globCostRefusal } from './glob-cost.ts';
import { IgnoreTree } from './ignore-tree.ts';
import { SKIPPED_DIR_GLOBS, SKIPPED_DIRS } from './skipped-dirs.ts';

export default defineBuiltin({
  spec: {
    name: 'glob_search',
    description: [
      'Find files by glob pattern (fast-glob syntax: `**/*.ts`, `src/**/test_*.py`, `*.{md,txt}`), newest first.',
      `Searches under \`path\` (default: the working directory); patterns may not be absolute or contain \`..\`. Files ignored by .gitignore or .ignore files in the searched tree are left out (as grep_search does), hidden files are matched only with \`include_hidden\`, ${SKIPPED_DIRS.join(', ')} are always skipped, and symlinks are neither followed nor listed.`,
      'Returns up to `max_results` files (default 100) with size and modification time; `truncated` says more matched.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      required: ['pattern'],
      additionalProperties: false,
      properties: {
        pattern: { type: 'string', minLength: 1, description: 'Glob pattern, relative to `path`.' },
        path: { type: 'string', minLength: 1, default: '.', description: 'Directory to search in, relative to the working directory.' },
        max_results: { type: 'integer', minimum: 1, maximum: 5000, default: 100, description: 'Most files to return.' },
        include_hidden: { type: 'boolean', default: false, description: 'Also match files and directories whose names start with a dot.' },
      },
    },
  },
  create(host) {
    const guard = new PathGuard(host.workDir);
    return {
      async execute(args) {
        const { pattern, path, max_results: maxResults, include_hidden: dot } = args;
        // ".." also counts inside braces and lists ("{..,src}/x"); the results are checked once more after expansion below.
        if (pattern.startsWith('/') || /(^|[/{,])\.\.($|[/},])/.test(pattern)) {
          return fail('FORGE_GLOB_PATTERN', `pattern "${pattern}" leaves the search directory`, 'use a pattern relative to `path`, and set `path` to search elsewhere in the working directory');
        }
        // Matched on the agent's thread: 110 characters of {a,b} made 4 million patterns, and *a*a*a*a*b backtracked for 35 s.
        const costly = globCostRefusal(pattern, 'pattern');
        if (costly) return costly;
        const base = guarded(guard, path);
        if (isFailure(base)) return base;
        let paths: string[];
        try {
          paths = await fg(pattern, { cwd: base.absolute, onlyFiles: true, followSymbolicLinks: false, dot, ignore: [...SKIPPED_DIR_GLOBS], suppressErrors: true });
        } catch (err) {
          return fail('FORGE_GLOB_PATTERN', `pattern "${pattern}" cannot be used: ${(err as Error).message}`);
        }
        const ignores = new IgnoreTree(guard, base.absolute);
        const kept = [];
        for (const path of paths) if (!(await ignores.ignored(path, false))) kept.push(path);
        // fast-glob walked by path, so a directory swapped for a symlink mid-walk was walked where it led:
        // each file is looked at again inside its verified directory, and what is shown comes from that look.
        const looks = await lookThroughVerifiedDirectories(guard, base.absolute, kept, (through) => lstat(through));
        const entries = kept.flatMap((path, i) => (looks[i]?.isFile() ? [{ path, info: looks[i] }] : []));
        entries.sort((a, b) => b.info.mtimeMs - a.info.mtimeMs || (a.path < b.path ? -1 : 1));
        const prefix = base.relative === '.' ? '' : `${base.relative}/`;
        const files = entries.slice(0, maxResults).map((e) => ({ path: prefix + e.path, size: e.info.size, modified: e.info.mtime.toISOString() }));
        return ok({ files, total: entries.length, truncated: entries.length > maxResults });
      },
    };
  },
});
