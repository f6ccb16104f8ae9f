/**
 * grep_search with ripgrep: `rg --json`, read as it streams, stopped (with
 * its process group) once enough matches are in or the time is up. What rg
 * reports is only a list of candidate lines: each is confirmed on a verified
 * read of its file before it is returned (confirmed-hits.ts).
 */
import { spawn } from 'node:child_process';
import { toolProcessCommand } from '../../../exec/tool-sandbox.ts';
import { createInterface } from 'node:readline';
import { killProcessTree } from '../../../exec/process-tree.ts';
import { STATE_DIR } from '../../../guard/path-guard.ts';
import { SKIPPED_DIRS } from '../skipped-dirs.ts';
import { confirmHits, lineDigest, type RipgrepHit } from './confirmed-hits.ts';
import { GrepPatternError, type GrepOutcome, type GrepQuery } from './grep-query.ts';

interface RgText {
  text?: string;
  bytes?: string;
}

interface RgMessage {
  type: 'begin' | 'match' | 'context' | 'end' | 'summary';
  data: { path?: RgText; lines?: RgText; line_number?: number };
}

/** rg's arguments for `query`, searching `target` ("-": standard input). Context lines are not asked for: they are read from the confirmed file. */
export function ripgrepArgs(query: GrepQuery, target = query.file ?? '.'): string[] {
  const args = ['--json', '--no-config', '--sort', 'path', '--no-require-git', '--no-ignore-parent', '--no-ignore-global'];
  if (query.includeHidden) args.push('--hidden');
  if (query.caseInsensitive) args.push('--ignore-case');
  else args.push('--case-sensitive');
  if (query.fixedStrings) args.push('--fixed-strings');
  for (const dir of SKIPPED_DIRS) args.push('--glob', `!${dir}/`);
  // The state dir is never a result (confirmation drops it): left out of the walk, it takes no place among
  // the hits rg is stopped after. Anchored: only the work dir's own (a search of it is rooted there).
  if (query.root === query.workDir) args.push('--glob', `!/${STATE_DIR}/`);
  for (const glob of query.include) args.push('--glob', glob);
  for (const glob of query.exclude) args.push('--glob', `!${glob}`);
  args.push('--regexp', query.pattern, '--', target);
  return args;
}

export async function searchWithRipgrep(rgPath: string, query: GrepQuery): Promise<GrepOutcome> {
  const run = await runRipgrep(rgPath, query, ripgrepArgs(query), query.root);
  // 2 is any error: fatal only if the pattern or a glob is bad. Whether it is, is asked of an rg that reads
  // nothing but empty input, so the message shown never names a file rg's walk met (perhaps outside).
  if (run.code === 2 && run.hits.length === 0 && !run.stopped && !run.timedOut) {
    const check = await runRipgrep(rgPath, query, ripgrepArgs(query, '-'), query.workDir);
    if (check.code === 2) throw new GrepPatternError(check.stderr.trim().split('\n').slice(0, 6).join('\n') || 'ripgrep failed');
  }
  // rg is stopped after one hit more than asked for: confirmed, that one says more exist. Hits that do not
  // confirm (a hard-linked file, one met through a swapped symlink) took places among those: rg is asked
  // again for more, a few times, and past that the answer says it may have more rather than that it is all.
  let confirmed = await confirmHits(query, run.hits);
  let limit = query.maxResults + 1;
  let last = run;
  while (last.stopped && confirmed.length <= query.maxResults && limit < MAX_WIDENING * (query.maxResults + 1) && !query.signal.aborted) {
    limit *= 4;
    last = await runRipgrep(rgPath, query, ripgrepArgs(query), query.root, limit);
    confirmed = await confirmHits(query, last.hits);
  }
  const gaveUp = last.stopped && confirmed.length <= query.maxResults;
  return { matches: confirmed.slice(0, query.maxResults), truncated: confirmed.length > query.maxResults || gaveUp, timedOut: last.timedOut };
}

/** How far past max_results + 1 rg's hits may go when confirmation drops some. */
const MAX_WIDENING = 64;

interface RipgrepRun {
  hits: RipgrepHit[];
  code: number | null;
  stderr: string;
  /** Stopped after `limit` hits (maxResults + 1 unless asked for more). */
  stopped: boolean;
  timedOut: boolean;
}

function runRipgrep(rgPath: string, query: GrepQuery, args: string[], cwd: string, limit = query.maxResults + 1): Promise<RipgrepRun> {
  return new Promise((resolve, reject) => {
    // In the agent's tool sandbox like every other tool process (nothing changes when none is installed).
    const command = toolProcessCommand(rgPath, args, { cwd });
    const child = spawn(command.command, command.args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    const run: RipgrepRun = { hits: [], code: null, stderr: '', stopped: false, timedOut: false };
    let file: string | undefined;

    const onAbort = () => {
      run.timedOut = true;
      killProcessTree(child);
    };
    if (query.signal.aborted) queueMicrotask(onAbort);
    else query.signal.addEventListener('abort', onAbort, { once: true });

    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (raw) => {
      if (run.stopped) return;
      const message = JSON.parse(raw) as RgMessage;
      if (message.type === 'begin') file = decode(message.data.path).toString('utf8').replace(/^\.\//, '');
      else if (message.type === 'end') file = undefined;
      else if (message.type === 'match' && file !== undefined) {
        run.hits.push({ path: file, line: message.data.line_number!, digest: lineDigest(decode(message.data.lines)) });
        if (run.hits.length >= limit) {
          run.stopped = true;
          killProcessTree(child);
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (run.stderr.length < 4000) run.stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      query.signal.removeEventListener('abort', onAbort);
      run.code = code;
      resolve(run);
    });
  });
}

/** rg's JSON gives valid UTF-8 as text and anything else as base64 bytes: either way, the bytes it read. */
function decode(value: RgText | undefined): Buffer {
  if (!value) return Buffer.alloc(0);
  return value.text !== undefined ? Buffer.from(value.text, 'utf8') : Buffer.from(value.bytes ?? '', 'base64');
}
