import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers/project.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

let base: string;
let work: string;
let t: ToolHarness;

function write(path: string, content: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

beforeEach(async () => {
  base = tempDir('forge-workspace-');
  work = join(base, 'work');
  mkdirSync(work);
  t = await tools(['file_create', 'read_skill', 'memory_search', 'memory_get'], { workDir: work });
});

describe('file_create', () => {
  it('writes into .forge/files and returns name, MIME type, absolute path and size', async () => {
    const value = await t.value('file_create', { filename: 'report.md', content: '# Report\n' });
    expect(value).toEqual({ filename: 'report.md', mime_type: 'text/markdown', path: join(work, '.forge', 'files', 'report.md'), bytes: 9, replaced: false, file_id: expect.stringMatching(/^[0-9a-f-]{36}$/), url: expect.stringMatching(/^\/files\/[0-9a-f-]{36}$/) });
    expect(readFileSync(join(work, '.forge/files/report.md'), 'utf8')).toBe('# Report\n');
  });

  it.each([
    ['data.json', 'application/json'],
    ['conf.YAML', 'application/yaml'],
    ['table.csv', 'text/csv'],
    ['run.sh', 'application/x-sh'],
    ['page.html', 'text/html'],
    ['tool.py', 'text/x-python'],
    ['mod.ts', 'text/typescript'],
  ])('accepts %s as %s', async (filename, mime) => {
    expect(await t.value('file_create', { filename, content: 'x' })).toMatchObject({ mime_type: mime });
  });

  it('replaces an existing file only with overwrite', async () => {
    await t.value('file_create', { filename: 'a.txt', content: 'one' });
    expect(await t.call('file_create', { filename: 'a.txt', content: 'two' })).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_EXISTS' } });
    expect(await t.value('file_create', { filename: 'a.txt', content: 'two', overwrite: true })).toMatchObject({ replaced: true });
    expect(readFileSync(join(work, '.forge/files/a.txt'), 'utf8')).toBe('two');
  });

  it.each([
    ['../escape.md', 'FORGE_FILE_NAME'],
    ['sub/dir.md', 'FORGE_FILE_NAME'],
    ['sub\\dir.md', 'FORGE_FILE_NAME'],
    ['..md', 'FORGE_FILE_NAME'],
    ['.hidden.md', 'FORGE_FILE_NAME'],
    ['tab\tname.md', 'FORGE_FILE_NAME'],
    ['binary.exe', 'FORGE_FILE_EXTENSION'],
    ['noext', 'FORGE_FILE_EXTENSION'],
  ])('refuses the name %j with %s', async (filename, code) => {
    expect(await t.call('file_create', { filename, content: 'x' })).toMatchObject({ ok: false, error: { code } });
    expect(existsSync(join(base, 'escape.md'))).toBe(false);
  });

  it('refuses when .forge/files is a symlink leading out of the work dir', async () => {
    mkdirSync(join(base, 'elsewhere'));
    mkdirSync(join(work, '.forge'));
    symlinkSync(join(base, 'elsewhere'), join(work, '.forge', 'files'));
    expect(await t.call('file_create', { filename: 'x.md', content: 'x' })).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_OUTSIDE' } });
    expect(existsSync(join(base, 'elsewhere', 'x.md'))).toBe(false);
  });
});

describe('read_skill', () => {
  beforeEach(() => {
    write(join(work, 'skills/code-review.md'), '---\nname: code-review\ndescription: How to review a change.\n---\n# Code review\n\nRead the diff first.\n');
    write(join(work, 'skills/deploy/SKILL.md'), '# Deploying\n\nRun the pipeline.\n');
    write(join(base, 'secret.md'), 'secret');
    symlinkSync(join(base, 'secret.md'), join(work, 'skills/leak.md'));
  });

  it('does not parse front matter past 16 kB (875 kB of it held the thread 2.6 s at each listing): no description, the body after it', async () => {
    write(join(work, 'skills/huge.md'), `---\ndescription: Never read.\n${'- [x, x, x, x, x, x, x, x]\n'.repeat(2_000)}---\n# Huge\n`);
    const started = performance.now();
    expect(await t.value('read_skill', { name: 'huge' })).toMatchObject({ name: 'huge', content: '# Huge\n' });
    expect(await t.value('read_skill', { name: 'huge' })).not.toHaveProperty('description');
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('loads skills/<name>.md without its front matter, with its description', async () => {
    expect(await t.value('read_skill', { name: 'code-review' })).toEqual({ name: 'code-review', path: 'skills/code-review.md', description: 'How to review a change.', content: '# Code review\n\nRead the diff first.\n' });
  });

  it('loads skills/<name>/SKILL.md, and accepts the name with .md', async () => {
    expect(await t.value('read_skill', { name: 'deploy' })).toMatchObject({ path: 'skills/deploy/SKILL.md', content: '# Deploying\n\nRun the pipeline.\n' });
    expect(await t.value('read_skill', { name: 'code-review.md' })).toMatchObject({ name: 'code-review' });
  });

  it('lists the skills when no name is given', async () => {
    expect(await t.value('read_skill', {})).toEqual({
      skills: [
        { name: 'code-review', path: 'skills/code-review.md', description: 'How to review a change.' },
        { name: 'deploy', path: 'skills/deploy/SKILL.md', description: 'Deploying' },
      ],
    });
  });

  it.each([['../secret'], ['deploy/SKILL'], ['a\\b'], ['..'], ['.hidden']])('refuses the name %j', async (name) => {
    expect(await t.call('read_skill', { name })).toMatchObject({ ok: false, error: { code: 'FORGE_SKILL_NAME' } });
  });

  it('refuses a skill file that is a symlink leading out of the work dir', async () => {
    expect(await t.call('read_skill', { name: 'leak' })).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_OUTSIDE' } });
  });

  it('names the closest skill when one is missing', async () => {
    expect(await t.call('read_skill', { name: 'code-reviw' })).toMatchObject({ ok: false, error: { code: 'FORGE_SKILL_NOT_FOUND', hint: 'did you mean "code-review"?' } });
  });
});

describe('memory_search and memory_get', () => {
  beforeEach(() => {
    write(
      join(work, '.forge/memory/customers.md'),
      ['# Customers', '', '## Acme Corp', 'Acme prefers invoices in EUR.', 'Their contact is Dana.', '', '## Globex', 'Globex pays by card.', ''].join('\n'),
    );
    write(join(work, '.forge/memory/projects/deploy.md'), ['# Deployments', '', 'We deploy on Tuesdays.', 'Rollbacks use the previous image.', ''].join('\n'));
    write(join(work, '.forge/memory/notes.txt'), 'not markdown: invoices invoices invoices');
    write(join(base, 'outside.md'), 'invoices outside');
    symlinkSync(join(base, 'outside.md'), join(work, '.forge/memory/linked.md'));
  });

  it('ranks passages by relevance, with source, line range and score', async () => {
    const value = await t.value<{ results: { text: string; source: string; start_line: number; end_line: number; score: number }[] }>('memory_search', { query: 'invoices EUR' });
    expect(value.results[0]).toEqual({ text: '## Acme Corp\nAcme prefers invoices in EUR.\nTheir contact is Dana.', source: 'customers.md', start_line: 3, end_line: 5, score: expect.any(Number) });
    expect(value.results.every((r) => r.source.endsWith('.md') && r.source !== 'linked.md')).toBe(true);
    const scores = value.results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('finds a passage by the words of its section heading', async () => {
    const value = await t.value<{ results: { source: string; start_line: number }[] }>('memory_search', { query: 'deployments', max_results: 1 });
    expect(value.results).toEqual([expect.objectContaining({ source: 'projects/deploy.md', start_line: 1 })]);
  });

  it('returns no results for an empty or missing memory folder', async () => {
    const empty = await tools(['memory_search'], { workDir: tempDir() });
    expect(await empty.value('memory_search', { query: 'anything' })).toMatchObject({ results: [], files: 0 });
  });

  it('reads a memory file whole or by lines', async () => {
    expect(await t.value('memory_get', { path: 'customers.md', start_line: 3, end_line: 4 })).toEqual({ path: 'customers.md', content: '## Acme Corp\nAcme prefers invoices in EUR.', start_line: 3, end_line: 4, total_lines: 8 });
    expect((await t.value<{ content: string }>('memory_get', { path: 'projects/deploy.md' })).content).toBe('# Deployments\n\nWe deploy on Tuesdays.\nRollbacks use the previous image.');
  });

  it.each([['../../secret.txt'], ['linked.md'], ['/etc/passwd'], ['../files/report.md']])('keeps memory_get inside the memory folder: %s', async (path) => {
    write(join(work, '.forge/files/report.md'), 'not memory');
    expect(await t.call('memory_get', { path })).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_OUTSIDE', message: expect.stringContaining('memory folder') } });
  });

  it.each([
    ['memory_search', { query: 'invoices' }],
    ['memory_get', { path: 'x.md' }],
  ])('%s refuses a memory folder that leads out of the work dir', async (name, args) => {
    const other = tempDir();
    mkdirSync(join(other, 'mem'));
    write(join(other, 'mem', 'x.md'), 'invoices');
    mkdirSync(join(other, 'work', '.forge'), { recursive: true });
    symlinkSync(join(other, 'mem'), join(other, 'work', '.forge', 'memory'));
    const linked = await tools([name], { workDir: join(other, 'work') });
    expect(await linked.call(name, args)).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_OUTSIDE', message: expect.stringContaining('the memory folder cannot be used') } });
  });
});
