/**
 * grep_search with ripgrep: `rg --json`, read as it streams, stopped (with
 * its process group) once enough matches are in or the time is up.
 */
import { spawn } from 'node:child_process';
import { toolProcessCommand } from '../../../exec/tool-sandbox.ts';
import { createInterface } from 'node:readline';
import { killProcessTree } from '../../../exec/process-tree.ts';
import { SKIPPED_DIRS } from '../skipped-dirs.ts';
import { clipLine, GrepPatternError, withContext, type GrepMatch, type GrepOutcome, type GrepQuery } from './grep-query.ts';

interface RgText {
  text?: string;
  bytes?: string;
}

interface RgMessage {
  type: 'begin' | 'match' | 'context' | 'end' | 'summary';
  data: { path?: RgText; lines?: RgText; line_number?: number };
}

export function ripgrepArgs(query: GrepQuery): string[] {
  const args = ['--json', '--no-config', '--sort', 'path', '--no-require-git', '--no-ignore-parent', '--no-ignore-global'];
  if (query.includeHidden) args.push('--hidden');
  if (query.caseInsensitive) args.push('--ignore-case');
  else args.push('--case-sensitive');
  if (query.fixedStrings) args.push('--fixed-strings');
  if (query.context > 0) args.push('--context', String(query.context));
  for (const dir of SKIPPED_DIRS) args.push('--glob', `!${dir}/`);
  for (const glob of query.include) args.push('--glob', glob);
  for (const glob of query.exclude) args.push('--glob', `!${glob}`);
  args.push('--regexp', query.pattern, '--', query.file ?? '.');
  return args;
}

export function searchWithRipgrep(rgPath: string, query: GrepQuery): Promise<GrepOutcome> {
  return new Promise((resolve, reject) => {
    // In the agent's tool sandbox like every other tool process (nothing changes when none is installed).
    const command = toolProcessCommand(rgPath, ripgrepArgs(query), { cwd: query.root });
    const child = spawn(command.command, command.args, { cwd: query.root, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    const matches: GrepMatch[] = [];
    let truncated = false;
    let timedOut = false;
    let stderr = '';
    let file: { path: string; seen: Map<number, { text: string; match: boolean }>; matchCount: number } | undefined;

    const onAbort = () => {
      timedOut = true;
      killProcessTree(child);
    };
    if (query.signal.aborted) queueMicrotask(onAbort);
    else query.signal.addEventListener('abort', onAbort, { once: true });

    const flush = () => {
      if (file) matches.push(...withContext(file.path, file.seen, query.context));
      file = undefined;
    };
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (raw) => {
      if (truncated) return;
      const message = JSON.parse(raw) as RgMessage;
      if (message.type === 'begin') file = { path: decode(message.data.path).replace(/^\.\//, ''), seen: new Map(), matchCount: 0 };
      else if (message.type === 'end') flush();
      else if ((message.type === 'match' || message.type === 'context') && file) {
        const isMatch = message.type === 'match';
        if (isMatch && matches.length + file.matchCount >= query.maxResults) {
          truncated = true;
          flush();
          killProcessTree(child);
          return;
        }
        if (isMatch) file.matchCount++;
        file.seen.set(message.data.line_number!, { text: clipLine(decode(message.data.lines)), match: isMatch });
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4000) stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      query.signal.removeEventListener('abort', onAbort);
      flush();
      // 0: matches, 1: none; 2: an error — fatal only if it stopped the search (a bad pattern), not for one unreadable file.
      if (code === 2 && matches.length === 0 && !truncated && !timedOut) {
        reject(new GrepPatternError(stderr.trim().split('\n').slice(0, 6).join('\n') || 'ripgrep failed'));
        return;
      }
      resolve({ matches: matches.slice(0, query.maxResults), truncated, timedOut });
    });
  });
}

function decode(value: RgText | undefined): string {
  if (!value) return '';
  return value.text ?? Buffer.from(value.bytes ?? '', 'base64').toString('utf8');
}
