import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { PathGuard } from '../../guard/path-guard.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { fsFailure, guarded, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';
import { findRipgrep } from './grep/find-ripgrep.ts';
import { GrepPatternError, type GrepOutcome, type GrepQuery } from './grep/grep-query.ts';
import { searchWithJavaScript } from './grep/javascript-engine.ts';
import { searchWithRipgrep } from './grep/ripgrep-engine.ts';
import { SKIPPED_DIRS } from './skipped-dirs.ts';
import { ALLOW_HARDLINKS_PROPERTY } from './file-access-config.ts';
import { toolProcessSlots } from '../../exec/process-slots.ts';
import { processesBusy } from '../process-busy.ts';
import { globCostRefusal } from './glob-cost.ts';

export default defineBuiltin({
  spec: {
    name: 'grep_search',
    description: [
      'Search file contents for a regular expression (or, with `fixed_strings`, a literal text) under `path` (a directory or one file; default the working directory).',
      'Uses ripgrep when it is available (its regex syntax) and a JavaScript search otherwise (JavaScript regex syntax; the common subset — classes, alternation, quantifiers, anchors, \\b, \\d, \\s, \\w — behaves the same). The `engine` field of the result says which ran.',
      `Both honour .gitignore and .ignore files in the searched tree, skip hidden files unless \`include_hidden\`, skip ${SKIPPED_DIRS.join(', ')} and binary files, and do not follow symlinks. \`include\` / \`exclude\` are globs (e.g. "*.ts", "src/**"); one without "/" matches a file name at any depth.`,
      'Every file is read through descriptors verified inside the working directory: ripgrep\'s matches are confirmed on such a read of their file (the line must be there, as ripgrep saw it) and their text and context come from it; a file reached outside, through a symlink, in .forge/, or hard-linked from elsewhere unless config allow_hardlinks, is dropped. The JavaScript search runs its regex in a worker thread stopped at the timeout, so a pattern that backtracks badly cannot hold up the server.',
      'Returns matches in path order with line numbers and `context` lines before and after, at most `max_results` (default 100; `truncated` says more exist). The search stops after `timeout` seconds (default 30) and returns what it found, with `timed_out` set.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    timeoutMs: 130_000,
    inputSchema: {
      type: 'object',
      required: ['pattern'],
      additionalProperties: false,
      properties: {
        pattern: { type: 'string', minLength: 1, description: 'Regular expression (or literal text with fixed_strings).' },
        path: { type: 'string', minLength: 1, default: '.', description: 'Directory or file to search, relative to the working directory.' },
        include: { type: 'array', items: { type: 'string', minLength: 1 }, default: [], description: 'Only search files matching one of these globs.' },
        exclude: { type: 'array', items: { type: 'string', minLength: 1 }, default: [], description: 'Skip files matching any of these globs.' },
        case_insensitive: { type: 'boolean', default: false, description: 'Ignore case.' },
        fixed_strings: { type: 'boolean', default: false, description: 'Treat the pattern as literal text.' },
        include_hidden: { type: 'boolean', default: false, description: 'Also search hidden files and directories (names starting with a dot).' },
        context: { type: 'integer', minimum: 0, maximum: 20, default: 0, description: 'Lines of context before and after each match.' },
        max_results: { type: 'integer', minimum: 1, maximum: 2000, default: 100, description: 'Most matches to return.' },
        timeout: { type: 'number', exclusiveMinimum: 0, maximum: 120, default: 30, description: 'Seconds before the search stops.' },
      },
    },
  },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      engine: { enum: ['auto', 'ripgrep', 'javascript'], default: 'auto', description: 'auto: ripgrep when found, else JavaScript.' },
      ripgrep_path: { type: 'string', minLength: 1, description: 'The rg binary to use (default: the @vscode/ripgrep package, else rg on PATH).' },
      ...ALLOW_HARDLINKS_PROPERTY,
    },
  },
  create(host) {
    const guard = new PathGuard(host.workDir);
    const { engine, ripgrep_path: ripgrepPath } = host.config;
    return {
      async execute(args, ctx) {
        // include/exclude are matched on the agent's thread for every file (the JavaScript search's picomatch).
        for (const glob of [...args.include, ...args.exclude]) {
          const costly = globCostRefusal(glob, 'glob');
          if (costly) return costly;
        }
        const target = guarded(guard, args.path);
        if (isFailure(target)) return target;
        const info = await stat(target.absolute).catch((err: unknown) => err as Error);
        if (info instanceof Error) return fsFailure(info, args.path);
        const isFile = info.isFile();
        const timeout = AbortSignal.timeout(Math.round(args.timeout * 1000));
        const query: GrepQuery = {
          pattern: args.pattern,
          fixedStrings: args.fixed_strings,
          caseInsensitive: args.case_insensitive,
          include: args.include,
          exclude: args.exclude,
          includeHidden: args.include_hidden,
          context: args.context,
          maxResults: args.max_results,
          root: isFile ? dirname(target.absolute) : target.absolute,
          workDir: guard.workDir,
          file: isFile ? basename(target.absolute) : undefined,
          signal: AbortSignal.any([timeout, ctx.signal]),
          allowHardlinks: host.config.allow_hardlinks,
        };
        const rg = engine === 'javascript' ? undefined : await findRipgrep(ripgrepPath, host.env);
        if (engine === 'ripgrep' && !rg) {
          return fail('FORGE_GREP_ENGINE', `ripgrep was not found${ripgrepPath ? ` at ${ripgrepPath}` : ' (no @vscode/ripgrep package, no rg on PATH)'}`, 'install ripgrep, or set the engine to auto to fall back to the JavaScript search');
        }
        // rg is a process per search: it takes one of the runtime's tool process slots, as every other tool process does.
        const slot = rg ? await toolProcessSlots().acquire(query.signal) : undefined;
        if (slot && 'refused' in slot) {
          if (slot.refused === 'busy') return { ok: false, error: processesBusy('ripgrep') };
          return ok({ engine: 'ripgrep', matches: [], truncated: false, timed_out: true });
        }
        let outcome: GrepOutcome;
        try {
          outcome = rg ? await searchWithRipgrep(rg, query) : await searchWithJavaScript(query);
        } catch (err) {
          if (err instanceof GrepPatternError) return fail('FORGE_GREP_PATTERN', `pattern "${args.pattern}" is not a valid regular expression: ${err.message}`, 'escape special characters, or set fixed_strings to search for the text as it is');
          throw err;
        } finally {
          slot?.release();
        }
        // Paths relative to the working directory, whatever was searched.
        const prefix = guard.relativeOf(query.root);
        const matches = outcome.matches.map((m) => ({ ...m, path: prefix === '.' ? m.path : `${prefix}/${m.path}` }));
        return ok({ engine: rg ? 'ripgrep' : 'javascript', matches, truncated: outcome.truncated, timed_out: outcome.timedOut });
      },
    };
  },
});
