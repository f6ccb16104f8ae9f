import { linkSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { rgPath } from '@vscode/ripgrep';
import { tempDir } from '../../../helpers/project.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

let work: string;
let ripgrep: ToolHarness;
let javascript: ToolHarness;

const FILES: Record<string, string> = {
  'src/app.ts': 'import { x } from "./x";\nexport function main() {\n  return TODO_value;\n}\n',
  'src/x.ts': 'export const x = 1; // TODO: tidy\n',
  'src/deep/nested/util.py': 'def util():\n    pass  # todo later\n',
  'docs/guide.md': '# Guide\n\nTODO write the guide\n\nmore\n',
  'notes.txt': 'line one\nline two\nTODO three\nline four\nline five\n',
  '.hidden/secret.txt': 'TODO hidden\n',
  'node_modules/pkg/index.js': 'TODO in a dependency\n',
  'build/out.js': 'TODO in build output\n',
  'ignored/skip.ts': 'TODO ignored by .gitignore\n',
  'logs/app.log': 'TODO log line\n',
  '.gitignore': 'ignored/\n*.log\n',
};

beforeAll(async () => {
  const base = tempDir('forge-search-');
  work = join(base, 'work');
  for (const [path, content] of Object.entries(FILES)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), content);
  }
  writeFileSync(join(work, 'bin.dat'), Buffer.from('TODO\0binary'));
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(base, 'outside', 'leak.ts'), 'TODO outside\n');
  symlinkSync(join(base, 'outside'), join(work, 'linked'));
  // Known modification times, so "newest first" is testable.
  let t = 1_700_000_000;
  for (const path of ['notes.txt', 'src/x.ts', 'src/app.ts', 'docs/guide.md', 'src/deep/nested/util.py']) utimesSync(join(work, path), t, (t += 100));
  ripgrep = await tools(['grep_search', 'glob_search', 'directory_tree'], { workDir: work, config: { grep_search: { engine: 'ripgrep', ripgrep_path: rgPath } } });
  javascript = await tools(['grep_search'], { workDir: work, config: { grep_search: { engine: 'javascript' } } });
});

interface GrepValue {
  engine: string;
  matches: { path: string; line: number; text: string; before: string[]; after: string[] }[];
  truncated: boolean;
  timed_out: boolean;
}

const GREP_CASES: [string, Record<string, unknown>, string[]][] = [
  ['a regex, skipping hidden, ignored, binary, dependency and build files and symlinks', { pattern: 'TODO' }, ['docs/guide.md:3', 'notes.txt:3', 'src/app.ts:3', 'src/x.ts:1']],
  ['case-insensitively', { pattern: 'todo', case_insensitive: true }, ['docs/guide.md:3', 'notes.txt:3', 'src/app.ts:3', 'src/deep/nested/util.py:2', 'src/x.ts:1']],
  ['literal text', { pattern: 'TODO:', fixed_strings: true }, ['src/x.ts:1']],
  ['regex syntax both engines share', { pattern: '^export (const|function) \\w+' }, ['src/app.ts:2', 'src/x.ts:1']],
  ['with an include glob matching names at any depth', { pattern: 'todo', case_insensitive: true, include: ['*.py'] }, ['src/deep/nested/util.py:2']],
  ['with an include glob anchored by a slash', { pattern: 'TODO', include: ['src/**'] }, ['src/app.ts:3', 'src/x.ts:1']],
  ['with an exclude glob', { pattern: 'TODO', exclude: ['*.md', '*.txt'] }, ['src/app.ts:3', 'src/x.ts:1']],
  ['in one directory', { pattern: 'TODO', path: 'src' }, ['src/app.ts:3', 'src/x.ts:1']],
  ['in one file', { pattern: 'line', path: 'notes.txt' }, ['notes.txt:1', 'notes.txt:2', 'notes.txt:4', 'notes.txt:5']],
  ['including hidden files when asked', { pattern: 'TODO hidden', include_hidden: true }, ['.hidden/secret.txt:1']],
];

describe.each([
  ['ripgrep', () => ripgrep],
  ['javascript', () => javascript],
])('grep_search with %s', (engine, harness) => {
  it.each(GREP_CASES)('searches %s', async (_what, args, expected) => {
    const value = await harness().value<GrepValue>('grep_search', args);
    expect(value.engine).toBe(engine);
    expect(value.matches.map((m) => `${m.path}:${m.line}`)).toEqual(expected);
  });

  it('returns context lines around each match', async () => {
    const value = await harness().value<GrepValue>('grep_search', { pattern: 'TODO three', context: 2 });
    expect(value.matches).toEqual([{ path: 'notes.txt', line: 3, text: 'TODO three', before: ['line one', 'line two'], after: ['line four', 'line five'] }]);
  });

  it('stops at max_results and says so', async () => {
    const value = await harness().value<GrepValue>('grep_search', { pattern: 'line', path: 'notes.txt', max_results: 2 });
    expect(value.matches.map((m) => m.line)).toEqual([1, 2]);
    expect(value.truncated).toBe(true);
  });

  it('refuses an invalid regular expression', async () => {
    expect(await harness().call('grep_search', { pattern: 'a(b' })).toMatchObject({ ok: false, error: { code: 'FORGE_GREP_PATTERN' } });
  });

  it('refuses to search outside the work dir', async () => {
    for (const path of ['linked', '..', '/etc']) expect(await harness().call('grep_search', { pattern: 'TODO', path })).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_OUTSIDE' } });
  });
});

describe('grep_search engine choice', () => {
  it('falls back to JavaScript when ripgrep is not found', async () => {
    const auto = await tools(['grep_search'], { workDir: work, config: { grep_search: { ripgrep_path: join(work, 'no-such-rg') } } });
    expect((await auto.value<GrepValue>('grep_search', { pattern: 'TODO three' })).engine).toBe('javascript');
  });

  it('uses the ripgrep binary of the @vscode/ripgrep package when nothing is configured', async () => {
    const auto = await tools(['grep_search'], { workDir: work, env: { PATH: '' } });
    expect((await auto.value<GrepValue>('grep_search', { pattern: 'TODO three' })).engine).toBe('ripgrep');
  });

  it.each([
    ['missing', 'no-such-rg'],
    ['a directory', 'src'],
  ])('refuses engine "ripgrep" when the configured ripgrep is %s, with a hint', async (_what, path) => {
    const strict = await tools(['grep_search'], { workDir: work, config: { grep_search: { engine: 'ripgrep', ripgrep_path: join(work, path) } } });
    expect(await strict.call('grep_search', { pattern: 'x' })).toMatchObject({ ok: false, error: { code: 'FORGE_GREP_ENGINE', hint: expect.stringContaining('auto') } });
  });

  it('stops a search at its timeout and returns what it found', async () => {
    const big = tempDir('forge-search-big-');
    for (let i = 0; i < 300; i++) writeFileSync(join(big, `f${i}.txt`), 'needle\n'.repeat(200));
    const slow = await tools(['grep_search'], { workDir: big, config: { grep_search: { engine: 'javascript' } } });
    const value = await slow.value<GrepValue>('grep_search', { pattern: 'needle', timeout: 0.001, max_results: 2000 });
    expect(value.timed_out).toBe(true);
    expect(value.matches.length).toBeLessThan(2000);
  });
});

describe('glob_search', () => {
  it('finds files by pattern, newest first, with size and time', async () => {
    const value = await ripgrep.value<{ files: { path: string; size: number; modified: string }[]; total: number; truncated: boolean }>('glob_search', { pattern: '**/*.{ts,txt,md,py}' });
    expect(value.files.map((f) => f.path)).toEqual(['src/deep/nested/util.py', 'docs/guide.md', 'src/app.ts', 'src/x.ts', 'notes.txt']);
    expect(value.files[4]).toEqual({ path: 'notes.txt', size: FILES['notes.txt'].length, modified: new Date(1_700_000_100_000).toISOString() });
    expect(value.truncated).toBe(false);
  });

  it('skips dependency and build folders and hidden files, and never follows symlinks', async () => {
    const value = await ripgrep.value<{ files: { path: string }[] }>('glob_search', { pattern: '**/*' });
    const paths = value.files.map((f) => f.path);
    expect(paths).not.toEqual(expect.arrayContaining(['node_modules/pkg/index.js']));
    expect(paths.some((p) => p.startsWith('node_modules/') || p.startsWith('build/') || p.startsWith('.hidden/') || p.startsWith('linked'))).toBe(false);
    const hidden = await ripgrep.value<{ files: { path: string }[] }>('glob_search', { pattern: '**/*.txt', include_hidden: true });
    expect(hidden.files.map((f) => f.path)).toContain('.hidden/secret.txt');
  });

  it('searches under a path and reports paths from the work dir', async () => {
    const value = await ripgrep.value<{ files: { path: string }[] }>('glob_search', { pattern: '*.ts', path: 'src' });
    expect(value.files.map((f) => f.path).sort()).toEqual(['src/app.ts', 'src/x.ts']);
  });

  it('stops at max_results', async () => {
    expect(await ripgrep.value('glob_search', { pattern: '**/*.{ts,txt,md,py}', max_results: 2 })).toMatchObject({ total: 5, truncated: true });
  });

  it.each(['../**/*', '/etc/*', 'src/../../*'])('refuses the pattern %s', async (pattern) => {
    expect(await ripgrep.call('glob_search', { pattern })).toMatchObject({ ok: false, error: { code: 'FORGE_GLOB_PATTERN' } });
  });

  it('refuses a search path outside the work dir', async () => {
    expect(await ripgrep.call('glob_search', { pattern: '*', path: 'linked' })).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_OUTSIDE' } });
  });
});

describe('directory_tree', () => {
  it('draws the tree, directories first, skipping dependency and build folders and not following symlinks', async () => {
    const value = await ripgrep.value<{ tree: string; files: number; directories: number; truncated: boolean }>('directory_tree', { path: 'src', depth: 5 });
    expect(value.tree).toBe(['src/', '├── deep/', '│   └── nested/', '│       └── util.py', '├── app.ts', '└── x.ts'].join('\n'));
    expect(value).toMatchObject({ files: 3, directories: 2, truncated: false });
  });

  it("labels a symlink into the agent's state as that, not as outside the work dir, and shows nothing of it", async () => {
    const dir = tempDir('forge-tree-state-');
    mkdirSync(join(dir, '.forge', 'secrets'), { recursive: true });
    writeFileSync(join(dir, '.forge', 'secrets', 'token'), 'x');
    symlinkSync('.forge', join(dir, 'statelink'));
    const tree = await tools(['directory_tree'], { workDir: dir });
    const { tree: shown } = await tree.value<{ tree: string }>('directory_tree', { depth: 3 });
    expect(shown).toContain("statelink -> (the agent's state)");
    expect(shown).not.toContain('token');
  });

  it('marks skipped folders and symlinks at the top level, without disclosing where an outside symlink points', async () => {
    const { tree } = await ripgrep.value<{ tree: string }>('directory_tree', { depth: 1 });
    expect(tree.split('\n')).toEqual(
      expect.arrayContaining(['├── build/ (skipped)', '├── node_modules/ (skipped)', '├── .hidden/', '├── linked -> (outside the working directory)']),
    );
    expect(tree).not.toContain('outside/');
    expect(tree).not.toContain('pkg');
  });

  it('stops at max_entries', async () => {
    const value = await ripgrep.value<{ tree: string; truncated: boolean }>('directory_tree', { max_entries: 3 });
    expect(value.truncated).toBe(true);
    expect(value.tree.split('\n')).toHaveLength(4);
  });

  it('refuses a file and a path outside', async () => {
    expect(await ripgrep.call('directory_tree', { path: 'notes.txt' })).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_NOT_DIRECTORY' } });
    expect(await ripgrep.call('directory_tree', { path: 'linked' })).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_OUTSIDE' } });
  });
});

describe('finding ripgrep on PATH', () => {
  it('finds an executable rg in a PATH directory, skipping relative entries', async () => {
    const { findOnPath: onPath } = await import('../../../../runtime/guard/command-guard.ts');
    const dir = tempDir('forge-bin-');
    symlinkSync(rgPath, join(dir, 'rg'));
    mkdirSync(join(dir, 'relative'));
    symlinkSync(rgPath, join(dir, 'relative', 'rg'));
    const previous = process.cwd();
    process.chdir(dir);
    try {
      expect(onPath('rg', `relative:${dir}:/nonexistent`)).toBe(join(dir, 'rg'));
    } finally {
      process.chdir(previous);
    }
    expect(onPath('rg', '/nonexistent')).toBeUndefined();
  });
});

describe('grep_search with ripgrep, when hits it finds are not results', () => {
  // rg is stopped after max_results + 1 hits, and each is then confirmed on a verified read: hits that do not
  // confirm must neither hide the results behind them nor make a cut-short answer look complete.
  const many = Array.from({ length: 30 }, (_, i) => `NEEDLE ${i}`).join('\n') + '\n';

  async function search(setUp: (work: string) => void, args: Record<string, unknown> = {}) {
    const work = join(tempDir('forge-search-dropped-'), 'work');
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'z-real.txt'), 'NEEDLE real\n');
    setUp(work);
    const grep = await tools(['grep_search'], { workDir: work, config: { grep_search: { engine: 'ripgrep', ripgrep_path: rgPath } } });
    return grep.value<GrepValue>('grep_search', { pattern: 'NEEDLE', max_results: 10, include_hidden: true, ...args });
  }

  it('finds what lies behind many hits in the state dir, which are never results', async () => {
    const value = await search((work) => {
      mkdirSync(join(work, '.forge'));
      writeFileSync(join(work, '.forge', 'log.txt'), many);
    });
    expect(value).toMatchObject({ engine: 'ripgrep', truncated: false });
    expect(value.matches.map((m) => `${m.path}:${m.line}`)).toEqual(['z-real.txt:1']);
  });

  it('finds what lies behind many hits in a hard-linked file, which is refused', async () => {
    const value = await search((work) => {
      writeFileSync(join(work, 'a-original.txt'), many);
      linkSync(join(work, 'a-original.txt'), join(work, 'a-linked.txt'));
    });
    expect(value.matches.map((m) => `${m.path}:${m.line}`)).toEqual(['z-real.txt:1']);
    expect(value.truncated).toBe(false);
  });

  it('says it may have more when dropped hits go on past what it asks rg for', async () => {
    const value = await search((work) => {
      writeFileSync(join(work, 'a-original.txt'), Array.from({ length: 2000 }, (_, i) => `NEEDLE ${i}`).join('\n') + '\n');
      linkSync(join(work, 'a-original.txt'), join(work, 'a-linked.txt'));
    });
    expect(value.matches).toEqual([]);
    expect(value.truncated).toBe(true);
  });
});
