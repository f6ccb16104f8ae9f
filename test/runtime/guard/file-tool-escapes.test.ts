/**
 * The file tools attacked as a hostile caller would: a path component
 * swapped for a symlink to outside while the tools run (a real process
 * swapping in a bounded loop), brace and extglob patterns that climb out,
 * hard links to outside files, FIFOs and devices. Every attempt must stay
 * inside (zero hits outside) and no refusal may say where anything outside is.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, existsSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../../runtime/tools/model.ts';
import { tempDir } from '../../helpers/project.ts';
import { tools, type ToolHarness } from '../../helpers/tools.ts';
import { swapping, symlinkSwappers } from '../../helpers/symlink-swapper.ts';
import { rgPath } from '@vscode/ripgrep';
import { findOnPath } from '../../../runtime/guard/command-guard.ts';
import { installToolSandbox, uninstallToolSandbox } from '../../../runtime/exec/tool-sandbox.ts';
import { probeSandbox } from '../../../runtime/exec/sandbox-probe.ts';

const FILE_TOOLS = ['file_read', 'file_write', 'file_edit', 'file_patch', 'atomic_edit', 'glob_search', 'grep_search', 'directory_tree', 'local_file_browser'];

let base: string;
let work: string;
let outside: string;
let harness: ToolHarness;

/** Counts every attempt, so the closing note can give them. */
export const attempts = { race: 0, walkRace: 0, braces: 0, hardlinks: 0, special: 0, ignoreFiles: 0 };

beforeEach(async () => {
  base = tempDir('forge-escape-');
  work = join(base, 'work');
  outside = join(base, 'outside-secrets');
  mkdirSync(join(work, 'sw'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'EXFIL secret line\n');
  writeFileSync(join(work, 'sw', 'secret.txt'), 'INSIDE text line\n');
  writeFileSync(join(work, 'plain.txt'), 'plain inside\n');
  harness = await tools(FILE_TOOLS, { workDir: work, config: { grep_search: { engine: 'javascript' } } });
});

const swappers = symlinkSwappers();

/** The swapper (test/helpers/symlink-swapper.ts) on work/sw, toward outside by default. */
function startSwapper(target = outside, dwellMs = 0): ChildProcess {
  return swappers.start(join(work, 'sw'), target, dwellMs);
}

function messageOf(result: ToolResult): string {
  return result.ok ? '' : `${result.error.message} ${result.error.hint ?? ''} ${result.error.details ?? ''}`;
}

/** The real work/sw (wherever the swapper left it: in place or parked) still holds its file: no rollback deleted what the call did not make. */
function insideSurvived(): void {
  const real = [join(work, 'sw'), join(work, '.sw-dir'), join(work, '.sw-link')].find((dir) => existsSync(join(dir, 'secret.txt')) && !readFileSync(join(dir, 'secret.txt'), 'utf8').includes('EXFIL'));
  expect(real, `the inside directory and its secret.txt (work holds ${JSON.stringify(spawnSync('find', [work, '-maxdepth', '2'], { encoding: 'utf8' }).stdout)})`).toBeDefined();
}

function outsideUntouched(): void {
  expect(readdirSync(outside)).toEqual(['secret.txt']);
  expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('EXFIL secret line\n');
}

describe('a path component swapped for a symlink to outside, in a bounded race', () => {
  const ROUNDS = 600;
  // The check that the race was real needs one call through to the inside; on a loaded machine 600
  // rounds can pass without one (a grep walks long enough to be cut by a swap each time): keep racing, bounded.
  const MAX_ROUNDS = 5 * ROUNDS;

  it.each([
    ['file_read', () => ({ path: 'sw/secret.txt' })],
    ['grep_search', () => ({ pattern: 'secret|text', path: 'sw' })],
    ['directory_tree', () => ({ path: 'sw' })],
    ['file_read (a directory listing)', () => ({ path: 'sw' })],
    ['local_file_browser (read)', () => ({ action: 'read', path: 'sw/secret.txt' })],
    ['local_file_browser (list)', () => ({ action: 'list', path: 'sw' })],
  ] as const)('%s never returns anything from outside', async (label, args) => {
    const tool = label.split(' ')[0];
    startSwapper();
    let inside = 0;
    for (let i = 0; i < ROUNDS || (inside === 0 && i < MAX_ROUNDS); i++) {
      attempts.race++;
      const result = await harness.call(tool, args());
      const text = JSON.stringify(result.ok ? result.value : result.error);
      expect(text).not.toContain('EXFIL');
      expect(messageOf(result)).not.toContain(outside);
      if (result.ok && /INSIDE|secret\.txt/.test(text)) inside++;
    }
    // The race was real: some calls got through to the inside file (the swapper did not just break the path).
    expect(inside).toBeGreaterThan(0);
  });

  it.each([
    ['file_write (new file)', 'file_write', (i: number) => ({ path: `sw/new-${i}.txt`, content: 'PWNED' })],
    ['file_write (existing file)', 'file_write', () => ({ path: 'sw/secret.txt', content: 'PWNED\n' })],
    ['file_write (new parent dirs)', 'file_write', (i: number) => ({ path: `sw/d${i}/e/f.txt`, content: 'PWNED' })],
    ['file_edit', 'file_edit', () => ({ path: 'sw/secret.txt', old_string: 'line', new_string: 'lineX' })],
    ['atomic_edit', 'atomic_edit', () => ({ path: 'sw/secret.txt', edits: [{ old_string: 'line', new_string: 'lineX' }] })],
    ['file_patch (add)', 'file_patch', (i: number) => ({ operations: [{ op: 'add', path: `sw/p-${i}.txt`, content: 'PWNED' }] })],
    ['file_patch (update)', 'file_patch', () => ({ operations: [{ op: 'update', path: 'sw/secret.txt', content: 'PWNED\n' }] })],
    ['file_patch (move, and its undo)', 'file_patch', (i: number) => ({ operations: [{ op: 'add', path: `sw/m-${i}.txt`, content: 'PWNED' }, { op: 'move', path: `sw/m-${i}.txt`, to: `sw/n-${i}/m.txt` }] })],
  ] as const)('%s never creates or changes a file outside', async (_label, tool, args) => {
    // Outside holds a file that the edit tools would change if they reached it.
    writeFileSync(join(outside, 'secret.txt'), 'EXFIL secret line\n');
    const swapper = startSwapper();
    let written = 0;
    for (let i = 0; i < ROUNDS || (written === 0 && i < MAX_ROUNDS); i++) {
      attempts.race++;
      const result = await harness.call(tool, args(i));
      expect(messageOf(result)).not.toContain(outside);
      if (result.ok) written++;
    }
    swapper.kill('SIGKILL');
    await new Promise((resolve) => swapper!.once('exit', resolve));
    outsideUntouched();
    insideSurvived();
    expect(written).toBeGreaterThan(0);
  });
});

describe('searches that walk by path (ripgrep, fast-glob), with a directory swapped for a symlink, in a bounded race', () => {
  // rg starts in the searched directory (the spawn's chdir, or bwrap --chdir) and walks by path; fast-glob
  // walks by path in this process: both go where a swapped symlink leads, and the name they report passes a
  // check by name once the swap is undone. Whatever they found must be confirmed through verified descriptors.
  async function race(tool: string, args: Record<string, unknown>, target: string, search: ToolHarness, check: (value: Record<string, unknown>) => void, rounds = 150) {
    // Paced: the tool's check of sw and rg's start are a process spawn apart.
    startSwapper(target, tool === 'grep_search' ? 1 : 0);
    await swapping(join(work, 'sw'));
    let answered = 0;
    // Rounds met by the swap at the tool's own check are refused: on a busy machine many may be, so the race
    // goes on (bounded) until one search has answered.
    for (let i = 0; i < rounds || (answered === 0 && i < rounds * 4); i++) {
      attempts.walkRace++;
      const result = await search.call(tool, args);
      const text = JSON.stringify(result.ok ? result.value : result.error);
      expect(text).not.toContain('EXFIL');
      expect(text).not.toContain(target);
      if (result.ok) {
        answered++;
        check(result.value as Record<string, unknown>);
      }
    }
    // Not that the race was won (on a busy machine it may not be): that the search really ran, rounds long.
    expect(answered).toBeGreaterThan(0);
  }

  describe.each(['off', 'on'] as const)('grep_search with ripgrep, sandbox %s', (sandbox) => {
    beforeEach(async () => {
      if (sandbox === 'on') {
        const probe = await probeSandbox();
        // Where bubblewrap cannot isolate, "on" would be the run above once more.
        if (probe.isolation !== 'bubblewrap') return;
        installToolSandbox(probe, { mode: 'auto' }, work);
      }
    });
    afterEach(() => uninstallToolSandbox());

    /** Outside, where the sandbox shows it too (it replaces /tmp with its own). */
    function visibleOutside(): string {
      const dir = tempDir('forge-escape-outside-', '/var/tmp');
      writeFileSync(join(dir, 'secret.txt'), 'EXFIL secret line\n');
      return dir;
    }

    it.each([
      ['outside', visibleOutside],
      ['in the state dir', () => join(work, '.forge')],
    ])('never returns a line from a file %s', async (_where, target) => {
      mkdirSync(join(work, '.forge', 'forged'), { recursive: true });
      writeFileSync(join(work, '.forge', 'secret.txt'), 'EXFIL state secret line\n');
      writeFileSync(join(work, '.forge', 'forged', 'tool.ts'), '// EXFIL forged secret text\n');
      const rg = await tools(['grep_search'], { workDir: work, config: { grep_search: { engine: 'ripgrep', ripgrep_path: findOnPath('rg', process.env.PATH ?? '') ?? rgPath } } });
      // Fewer rounds in the sandbox: each bubblewrap start takes tens of milliseconds.
      const rounds = sandbox === 'on' ? 50 : 150;
      await race('grep_search', { pattern: 'secret|text', path: 'sw', include_hidden: true, context: 1 }, target(), rg, (value) => {
        expect(value.engine).toBe('ripgrep');
        for (const match of value.matches as { path: string; text: string }[]) expect(match).toMatchObject({ path: 'sw/secret.txt', text: 'INSIDE text line' });
      }, rounds);
    });
  });

  it.each([
    ['outside', () => outside],
    ['in the state dir', () => join(work, '.forge')],
  ])('glob_search never lists a file %s, nor its size or time', async (_where, target) => {
    writeFileSync(join(outside, 'EXFIL-only-outside.txt'), 'x'.repeat(1000));
    mkdirSync(join(work, '.forge', 'forged'), { recursive: true });
    writeFileSync(join(work, '.forge', 'forged', 'EXFIL-tool.ts'), 'x'.repeat(1000));
    writeFileSync(join(work, '.forge', 'secret.txt'), 'x'.repeat(1000));
    await race('glob_search', { pattern: 'sw/**', include_hidden: true }, target(), harness, (value) => {
      for (const file of value.files as { path: string; size: number }[]) expect(file).toMatchObject({ path: 'sw/secret.txt', size: 'INSIDE text line\n'.length });
    });
  });
});

describe('an outside object named as the work dir plus " (deleted)"', () => {
  // Linux shows a deleted object's /proc/self/fd path with " (deleted)" appended. A sibling of the work dir
  // named "<work dir> (deleted)" reads as the work dir itself if that suffix is ever cut off. The caller asks
  // for sw/"work (deleted)" (inside, a real entry); the swapper turns sw into a symlink to the work dir's
  // parent, where that name is the outside sibling. Bounded as above.
  const ROUNDS = 600;
  const NAME = 'work (deleted)';

  it.each([
    ['file_read', 'a directory', () => ({ path: `sw/${NAME}` })],
    ['directory_tree', 'a directory', () => ({ path: `sw/${NAME}` })],
    ['local_file_browser', 'a directory', () => ({ action: 'list', path: `sw/${NAME}` })],
    ['file_read', 'a file', () => ({ path: `sw/${NAME}` })],
    ['local_file_browser', 'a file', () => ({ action: 'read', path: `sw/${NAME}` })],
  ] as const)('%s never reaches %s outside with that name', async (tool, kind, args) => {
    const decoy = join(base, NAME);
    expect(decoy).toBe(`${work} (deleted)`);
    if (kind === 'a directory') {
      mkdirSync(decoy);
      writeFileSync(join(decoy, 'EXFIL-listed.txt'), 'EXFIL secret line\n');
      mkdirSync(join(work, 'sw', NAME));
      writeFileSync(join(work, 'sw', NAME, 'secret.txt'), 'INSIDE text line\n');
    } else {
      writeFileSync(decoy, 'EXFIL secret line\n');
      writeFileSync(join(work, 'sw', NAME), 'INSIDE text line\n');
    }
    startSwapper(base);
    let inside = 0;
    for (let i = 0; i < ROUNDS || (inside === 0 && i < 5 * ROUNDS); i++) {
      attempts.race++;
      const result = await harness.call(tool, args());
      const text = JSON.stringify(result.ok ? result.value : result.error);
      expect(text).not.toContain('EXFIL');
      expect(messageOf(result)).not.toContain(decoy);
      if (result.ok && /INSIDE|secret\.txt/.test(text)) inside++;
    }
    expect(inside).toBeGreaterThan(0);
  });
});

describe('patterns that climb out after expansion', () => {
  const PATTERNS = ['{..,x}/**', '{x,..}/outside-secrets/*', '{..,.}/*/secret.txt', 'sw/{..,y}/../outside-secrets/*', '@(..|x)/**/*.txt', '+(..)/**', '!(x)/../*', '{.,..}/{.,..}/**', '**/{..,a}/**'];

  beforeEach(() => {
    symlinkSync(outside, join(work, 'to-outside'));
  });

  it.each(PATTERNS)('glob_search %s lists nothing outside', async (pattern) => {
    attempts.braces++;
    const result = await harness.call('glob_search', { pattern, include_hidden: true });
    const text = JSON.stringify(result.ok ? result.value : result.error);
    expect(text).not.toContain('EXFIL');
    expect(text).not.toContain(outside);
    if (result.ok) for (const file of (result.value as { files: { path: string }[] }).files) expect(file.path.startsWith('..')).toBe(false);
  });

  it.each(PATTERNS)('grep_search include %s finds nothing outside', async (pattern) => {
    attempts.braces++;
    const result = await harness.call('grep_search', { pattern: 'secret', include: [pattern] });
    expect(JSON.stringify(result.ok ? result.value : result.error)).not.toContain('EXFIL');
  });

  it('glob_search follows no symlink out and lists nothing behind it', async () => {
    attempts.braces++;
    const value = await harness.value<{ files: { path: string }[] }>('glob_search', { pattern: 'to-outside/**' });
    expect(value.files).toEqual([]);
  });
});

describe('hard links to files outside', () => {
  beforeEach(() => {
    linkSync(join(outside, 'secret.txt'), join(work, 'linked.txt'));
  });

  it.each([
    ['file_read', { path: 'linked.txt' }],
    ['file_write', { path: 'linked.txt', content: 'PWNED' }],
    ['file_edit', { path: 'linked.txt', old_string: 'secret', new_string: 'PWNED' }],
    ['atomic_edit', { path: 'linked.txt', edits: [{ old_string: 'secret', new_string: 'PWNED' }] }],
    ['file_patch', { operations: [{ op: 'update', path: 'linked.txt', content: 'PWNED' }] }],
  ] as const)('%s refuses a file with several links, naming only the given path', async (tool, args) => {
    attempts.hardlinks++;
    const result = await harness.call(tool, args);
    expect(result.ok).toBe(false);
    expect(messageOf(result)).toContain('linked.txt');
    expect(messageOf(result)).toMatch(/hard link/);
    expect(messageOf(result)).not.toContain(outside);
    outsideUntouched();
  });

  it.each(['javascript', 'ripgrep'])('grep_search (%s) leaves hard-linked files out', async (engine) => {
    attempts.hardlinks++;
    const grep = await tools(['grep_search'], { workDir: work, config: { grep_search: { engine } } });
    const value = await grep.value<{ matches: { path: string }[] }>('grep_search', { pattern: 'secret' });
    expect(value.matches.map((m) => m.path)).not.toContain('linked.txt');
  });

  it('reads and writes them when the tool config sets allow_hardlinks: true', async () => {
    attempts.hardlinks++;
    const allowed = await tools(['file_read', 'file_write'], { workDir: work, config: { file_read: { allow_hardlinks: true }, file_write: { allow_hardlinks: true } } });
    expect((await allowed.value<{ content: string }>('file_read', { path: 'linked.txt' })).content).toBe('EXFIL secret line\n');
    await allowed.value('file_write', { path: 'linked.txt', content: 'shared\n' });
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('shared\n');
  });
});

describe('FIFOs and devices', () => {
  beforeEach(() => {
    for (let i = 0; i < 12; i++) spawnSync('mkfifo', [join(work, `pipe-${i}`)]);
  });

  it.each([
    ['file_write', { path: 'pipe-0', content: 'x' }],
    ['file_read', { path: 'pipe-0' }],
    ['file_edit', { path: 'pipe-0', old_string: 'a', new_string: 'b' }],
    ['file_patch', { operations: [{ op: 'update', path: 'pipe-0', content: 'x' }] }],
    ['file_write', { path: '/dev/null', content: 'x' }],
    ['file_read', { path: '/dev/zero' }],
  ] as const)('%s %j is refused without blocking', async (tool, args) => {
    attempts.special++;
    const result = await harness.call(tool, args, { timeoutMs: 20_000 });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(['FORGE_FILE_NOT_REGULAR', 'FORGE_PATH_OUTSIDE']).toContain(result.error.code);
  });

  it('a device node inside the work dir is refused for reading and writing', async () => {
    attempts.special += 2;
    const made = spawnSync('mknod', [join(work, 'zero'), 'c', '1', '5']);
    expect(made.status).toBe(0); // Tests run as root here; a device node is what an attacker with a foothold would plant.
    const read = await harness.call('file_read', { path: 'zero' });
    const written = await harness.call('file_write', { path: 'zero', content: 'x' });
    for (const result of [read, written]) {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.code).toBe('FORGE_FILE_NOT_REGULAR');
    }
  });

  it('a burst of writes to FIFOs does not freeze the other file tools', async () => {
    attempts.special += 12;
    const burst = Array.from({ length: 12 }, (_, i) => harness.call('file_write', { path: `pipe-${i}`, content: 'x'.repeat(1 << 20) }));
    const read = await harness.value<{ content: string }>('file_read', { path: 'plain.txt' });
    expect(read.content).toBe('plain inside\n');
    for (const result of await Promise.all(burst)) expect(result.ok).toBe(false);
    // And the grep walk skips FIFOs instead of hanging on them.
    const grep = await harness.value<{ matches: { path: string }[] }>('grep_search', { pattern: 'plain' });
    expect(grep.matches.map((m) => m.path)).toEqual(['plain.txt']);
  });
});

describe('.gitignore and .ignore files that are not regular files inside', () => {
  // glob_search and the JavaScript grep read these themselves, for every directory they search.
  const SEARCHES = [
    ['glob_search', { pattern: '**/*.txt', include_hidden: true }],
    ['grep_search', { pattern: 'inside|INSIDE' }],
  ] as const;
  const fifos: string[] = [];

  afterEach(() => {
    // Code that opened a FIFO blocking is still waiting in the I/O pool: a writer coming and going lets it go.
    for (const fifo of fifos.splice(0)) {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // ENXIO: nobody is waiting on it
      }
      unlinkSync(fifo);
    }
  });

  function pathsOf(result: ToolResult): string[] {
    expect(result.ok, JSON.stringify(result)).toBe(true);
    const value = (result as { value: { files?: { path: string }[]; matches?: { path: string }[] } }).value;
    return (value.files ?? value.matches ?? []).map((f) => f.path);
  }

  it.each(['.gitignore', '.ignore'])('%s as a symlink to a file outside is not followed: its rules do not apply', async (name) => {
    writeFileSync(join(outside, 'rules'), '*.txt\n');
    symlinkSync(join(outside, 'rules'), join(work, name));
    for (const [tool, args] of SEARCHES) {
      attempts.ignoreFiles++;
      expect(pathsOf(await harness.call(tool, args)), tool).toContain('plain.txt');
    }
  });

  it('a .gitignore hard-linked to a file outside is not read', async () => {
    writeFileSync(join(outside, 'rules'), '*.txt\n');
    linkSync(join(outside, 'rules'), join(work, '.gitignore'));
    for (const [tool, args] of SEARCHES) {
      attempts.ignoreFiles++;
      expect(pathsOf(await harness.call(tool, args)), tool).toContain('plain.txt');
    }
  });

  it('FIFOs named .gitignore neither hang the searches nor freeze the other file tools', async () => {
    // More FIFOs than the I/O pool has threads: opened blocking, they would hold all of it.
    for (let i = 0; i < 6; i++) {
      const dir = join(work, `d${i}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'f.txt'), 'inside\n');
      fifos.push(join(dir, '.gitignore'));
      expect(spawnSync('mkfifo', [fifos.at(-1)!]).status).toBe(0);
    }
    fifos.push(join(work, '.ignore'));
    spawnSync('mkfifo', [fifos.at(-1)!]);
    for (const [tool, args] of SEARCHES) {
      attempts.ignoreFiles++;
      const paths = pathsOf(await harness.call(tool, args, { timeoutMs: 5_000 }));
      expect(paths, tool).toContain('plain.txt');
      expect(paths, tool).toContain('d5/f.txt');
    }
    const read = await harness.call('file_read', { path: 'plain.txt' }, { timeoutMs: 5_000 });
    expect(read).toMatchObject({ ok: true, value: { content: 'plain inside\n' } });
  });

  it('a device node named .gitignore (and a symlink to /dev/zero) is not read', async () => {
    expect(spawnSync('mknod', [join(work, '.gitignore'), 'c', '1', '5']).status).toBe(0); // /dev/zero's numbers
    mkdirSync(join(work, 'sub'));
    writeFileSync(join(work, 'sub', 'x.txt'), 'inside\n');
    symlinkSync('/dev/zero', join(work, 'sub', '.gitignore'));
    const before = process.memoryUsage().rss;
    for (const [tool, args] of SEARCHES) {
      attempts.ignoreFiles++;
      const paths = pathsOf(await harness.call(tool, args, { timeoutMs: 10_000 }));
      expect(paths, tool).toEqual(expect.arrayContaining(['plain.txt', 'sub/x.txt']));
    }
    // Reading either would have taken hundreds of megabytes.
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
  });

  it('an ignore file larger than the cap is not read (its rules do not apply)', async () => {
    writeFileSync(join(work, '.gitignore'), `${'# padding\n'.repeat(110_000)}plain.txt\n`);
    for (const [tool, args] of SEARCHES) {
      attempts.ignoreFiles++;
      expect(pathsOf(await harness.call(tool, args)), tool).toContain('plain.txt');
    }
    // A small one still is.
    writeFileSync(join(work, '.gitignore'), 'plain.txt\n');
    expect(pathsOf(await harness.call('glob_search', { pattern: '**/*.txt' }))).not.toContain('plain.txt');
  });
});
