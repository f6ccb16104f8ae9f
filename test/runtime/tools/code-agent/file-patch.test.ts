import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { PathGuard } from '../../../../runtime/guard/path-guard.ts';
import { applyPlan, moveWithoutReplacing, PatchApplyError, verifiedPatchIo, type PatchIo } from '../../../../runtime/tools/code-agent/patch-apply.ts';
import { planPatch, type PatchOperation, type PatchStep } from '../../../../runtime/tools/code-agent/patch-plan.ts';
import { isFailure } from '../../../../runtime/tools/fs-results.ts';
import { tempDir } from '../../../helpers/project.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

let work: string;
let t: ToolHarness;
const read = (path: string) => readFileSync(join(work, path), 'utf8');

/** Every file under the work dir with its content, to compare before and after. */
function snapshot(dir = work, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix + entry.name;
    if (entry.isSymbolicLink()) out[rel] = '(symlink)';
    else if (entry.isDirectory()) Object.assign(out, { [`${rel}/`]: '' }, snapshot(join(dir, entry.name), `${rel}/`));
    else out[rel] = readFileSync(join(dir, entry.name), 'utf8');
  }
  return out;
}

beforeEach(async () => {
  const base = tempDir('forge-patch-');
  work = join(base, 'work');
  mkdirSync(join(work, 'src'), { recursive: true });
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(work, 'src', 'a.ts'), 'export const a = 1;\nexport const b = 2;\n');
  writeFileSync(join(work, 'src', 'old.ts'), 'old\n');
  writeFileSync(join(work, 'README.md'), '# Title\n\nText.\n');
  chmodSync(join(work, 'README.md'), 0o600);
  symlinkSync(join(base, 'outside'), join(work, 'out'));
  t = await tools(['file_patch'], { workDir: work });
});

describe('file_patch', () => {
  it('adds, updates (content, edits, diff), moves and deletes in one call', async () => {
    const value = await t.value<{ applied: number; changes: { op: string; path: string; to?: string; diff?: string }[] }>('file_patch', {
      operations: [
        { op: 'add', path: 'src/new/b.ts', content: 'export const c = 3;\n' },
        { op: 'update', path: 'src/a.ts', edits: [{ old_string: 'a = 1', new_string: 'a = 10' }] },
        { op: 'update', path: 'README.md', diff: '@@ -1,3 +1,3 @@\n # Title\n \n-Text.\n+More text.\n' },
        { op: 'move', path: 'src/old.ts', to: 'lib/old.ts' },
        { op: 'update', path: 'lib/old.ts', content: 'moved and changed\n' },
        { op: 'delete', path: 'src/new/b.ts' },
      ],
    });
    expect(value.applied).toBe(6);
    expect(value.changes.map((c) => c.op)).toEqual(['add', 'update', 'update', 'move', 'update', 'delete']);
    expect(value.changes[1].diff).toContain('-export const a = 1;\n+export const a = 10;');
    expect(read('src/a.ts')).toBe('export const a = 10;\nexport const b = 2;\n');
    expect(read('README.md')).toBe('# Title\n\nMore text.\n');
    expect(read('lib/old.ts')).toBe('moved and changed\n');
    expect(existsSync(join(work, 'src/old.ts'))).toBe(false);
    expect(existsSync(join(work, 'src/new/b.ts'))).toBe(false);
  });

  it.each([
    [[{ op: 'add', path: 'src/a.ts', content: 'x' }], 'FORGE_FILE_EXISTS', 'operation 1 (add src/a.ts)'],
    [[{ op: 'update', path: 'nope.ts', content: 'x' }], 'FORGE_FILE_NOT_FOUND', 'operation 1'],
    [[{ op: 'delete', path: 'src' }], 'FORGE_FILE_IS_DIRECTORY', 'operation 1'],
    [[{ op: 'move', path: 'src/a.ts', to: 'README.md' }], 'FORGE_FILE_EXISTS', 'destination'],
    [[{ op: 'add', path: 'README.md/inner.txt', content: 'x' }], 'FORGE_FILE_NOT_DIRECTORY', 'README.md is a file'],
    [[{ op: 'update', path: 'src/a.ts', content: 'x', edits: [{ old_string: 'a', new_string: 'b' }] }], 'FORGE_PATCH_INVALID', 'exactly one of'],
    [[{ op: 'move', path: 'src/a.ts' }], 'FORGE_PATCH_INVALID', 'needs "to"'],
    [[{ op: 'update', path: 'src/a.ts', diff: '@@ -1,1 +1,1 @@\n-not there\n+x\n' }], 'FORGE_PATCH_DIFF', 'does not apply'],
  ])('refuses %j with %s before touching anything', async (operations, code, message) => {
    const before = snapshot();
    const result = await t.call('file_patch', { operations: [{ op: 'add', path: 'first.txt', content: 'first' }, ...operations] });
    expect(result).toMatchObject({ ok: false, error: { code } });
    if (!result.ok) {
      expect(result.error.message).toContain(message.replace('operation 1', 'operation 2'));
      expect(result.error.message).toContain('nothing was changed');
    }
    expect(snapshot()).toEqual(before);
  });

  it('checks each operation against the files the earlier ones leave (a deleted file cannot be updated)', async () => {
    const result = await t.call('file_patch', {
      operations: [
        { op: 'delete', path: 'src/a.ts' },
        { op: 'update', path: 'src/a.ts', content: 'x' },
      ],
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_NOT_FOUND', message: expect.stringContaining('operation 2') } });
    expect(existsSync(join(work, 'src/a.ts'))).toBe(true);
  });

  it('refuses paths outside the work dir, on either side of a move', async () => {
    for (const operations of [[{ op: 'add', path: 'out/evil.txt', content: 'x' }], [{ op: 'move', path: 'src/a.ts', to: '../escaped.ts' }]]) {
      expect(await t.call('file_patch', { operations })).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_OUTSIDE' } });
    }
    expect(readdirSync(join(work, 'out'))).toEqual([]);
    expect(existsSync(join(work, 'src/a.ts'))).toBe(true);
  });
});

/** The checked plan of `operations` in the work dir, and the real verified file operations to apply it with. */
async function checkedPlan(operations: PatchOperation[]) {
  const guard = new PathGuard(work);
  const plan = await planPatch(operations, guard);
  if (isFailure(plan)) throw new Error(plan.error.message);
  return { steps: plan.steps, real: verifiedPatchIo(guard) };
}

/** Applies a plan that must fail; returns its error. */
const failure = async (steps: PatchStep[], io: PatchIo) => (await applyPlan(steps, io).catch((err: unknown) => err)) as PatchApplyError;

describe('applying a checked plan', () => {
  it.each([1, 2, 3, 4, 5])('rolls back every earlier operation when operation %i fails while being applied', async (failAt) => {
    const { steps, real } = await checkedPlan([
      { op: 'add', path: 'brand/new/dir/file.txt', content: 'new' },
      { op: 'update', path: 'README.md', content: 'changed' },
      { op: 'delete', path: 'src/old.ts' },
      { op: 'move', path: 'src/a.ts', to: 'lib/a.ts' },
      { op: 'add', path: 'last.txt', content: 'last' },
    ]);
    const before = snapshot();
    const modeBefore = statSync(join(work, 'README.md')).mode;
    // The real file operations, except that the failAt-th step's change throws as a full disk would.
    let step = 0;
    const failing: PatchIo = {
      ...real,
      write: (path, data, options) => (++step === failAt ? Promise.reject(Object.assign(new Error('no space left'), { code: 'ENOSPC' })) : real.write(path, data, options)),
      remove: (path, identity) => (++step === failAt ? Promise.reject(Object.assign(new Error('busy'), { code: 'EBUSY' })) : real.remove(path, identity)),
      move: (from, to, identity) => (++step === failAt ? Promise.reject(Object.assign(new Error('busy'), { code: 'EBUSY' })) : real.move(from, to, identity)),
    };
    const error = await failure(steps, failing);
    expect(error).toBeInstanceOf(PatchApplyError);
    expect(error.stepIndex).toBe(failAt - 1);
    expect(error.rollbackFailures).toEqual([]);
    expect(snapshot()).toEqual(before);
    expect(statSync(join(work, 'README.md')).mode).toBe(modeBefore);
  });

  it('undoes only the directories it made, and only while empty: what another process put in one meanwhile stays', async () => {
    const { steps, real } = await checkedPlan([{ op: 'add', path: 'brand/new/dir/file.txt', content: 'new' }]);
    const racing: PatchIo = {
      ...real,
      // Another writer puts a file in one of the new directories just before the patch's own write fails.
      write: () => {
        writeFileSync(join(work, 'brand', 'new', 'theirs.txt'), 'not the patch\'s');
        return Promise.reject(Object.assign(new Error('no space left'), { code: 'ENOSPC' }));
      },
    };
    const error = await failure(steps, racing);
    expect(error).toBeInstanceOf(PatchApplyError);
    expect(read('brand/new/theirs.txt')).toBe("not the patch's");
    expect(existsSync(join(work, 'brand', 'new', 'dir'))).toBe(false); // made by the patch, empty: removed
    expect(error.rollbackFailures).toHaveLength(1); // brand/new is not empty: kept, and said so
    expect(error.rollbackFailures[0]).toMatch(/ENOTEMPTY|not empty/);
  });

  it('fails an update whose file disappeared after the plan, and never creates it instead', async () => {
    const { steps, real } = await checkedPlan([{ op: 'update', path: 'README.md', content: 'changed' }]);
    rmSync(join(work, 'README.md'));
    const error = await failure(steps, real);
    expect(error).toBeInstanceOf(PatchApplyError);
    expect(error.message).toContain('README.md disappeared before it could be updated');
    expect(existsSync(join(work, 'README.md'))).toBe(false);
  });

  it('undoes a write only on the very file it wrote: one put in its place meanwhile is left, and said so', async () => {
    const { steps, real } = await checkedPlan([{ op: 'add', path: 'mine.txt', content: 'the patch' }, { op: 'update', path: 'README.md', content: 'x' }]);
    let writes = 0;
    const racing: PatchIo = {
      ...real,
      write: async (path, data, options) => {
        if (++writes === 1) return real.write(path, data, options);
        // Someone replaces the patch's new file with their own before the second step fails.
        rmSync(join(work, 'mine.txt'));
        writeFileSync(join(work, 'mine.txt'), 'theirs');
        throw Object.assign(new Error('no space left'), { code: 'ENOSPC' });
      },
    };
    const error = await failure(steps, racing);
    expect(error.stepIndex).toBe(1);
    expect(read('mine.txt')).toBe('theirs');
    expect(error.rollbackFailures).toEqual([expect.stringContaining('mine.txt is no longer the file this patch touched')]);
  });

  it('never replaces a file that appears at a move\'s destination after the plan checked it', async () => {
    const { steps, real } = await checkedPlan([{ op: 'update', path: 'README.md', content: 'x' }, { op: 'move', path: 'src/a.ts', to: 'src/b.ts' }]);
    const racing: PatchIo = {
      ...real,
      // Another writer saves src/b.ts just as the move runs (after any check the move could make).
      move: (from, to, identity) => {
        if (!identity) writeFileSync(join(work, 'src', 'b.ts'), 'theirs\n');
        return real.move(from, to, identity);
      },
    };
    const error = await failure(steps, racing);
    expect(error).toBeInstanceOf(PatchApplyError);
    expect(error.stepIndex).toBe(1);
    expect(error.message).toContain('src/b.ts appeared before the move');
    expect(read('src/b.ts')).toBe('theirs\n');
    expect(read('src/a.ts')).toBe('export const a = 1;\nexport const b = 2;\n');
    expect(read('README.md')).toBe('# Title\n\nText.\n'); // the update before it was undone
    expect(error.rollbackFailures).toEqual([]);
  });

  it.each([
    ['the moved file was replaced at its new name', 'src/b.ts', /src\/b\.ts is no longer the file this patch touched/],
    ['a file took its old name', 'src/a.ts', /src\/a\.ts exists: not replaced/],
  ])('undoes a move only on the very file it moved, and only to a free name: %s', async (_case, taken, undoFailure) => {
    const { steps, real } = await checkedPlan([{ op: 'move', path: 'src/a.ts', to: 'src/b.ts' }, { op: 'update', path: 'README.md', content: 'x' }]);
    const racing: PatchIo = {
      ...real,
      // Someone writes a file of their own at `taken` just before the second step fails.
      write: async () => {
        rmSync(join(work, taken), { force: true });
        writeFileSync(join(work, taken), 'theirs\n');
        throw Object.assign(new Error('no space left'), { code: 'ENOSPC' });
      },
    };
    const error = await failure(steps, racing);
    expect(error.stepIndex).toBe(1);
    expect(read(taken)).toBe('theirs\n');
    expect(error.rollbackFailures).toEqual([expect.stringMatching(undoFailure)]);
    if (taken === 'src/a.ts') expect(read('src/b.ts')).toBe('export const a = 1;\nexport const b = 2;\n'); // the patch's file, kept where it is
    else expect(existsSync(join(work, 'src', 'a.ts'))).toBe(false); // their file was not moved back in its place
  });

  it('moves without replacing where the file system has no hard links, and never moves a directory', async () => {
    const noLinks = () => Promise.reject(Object.assign(new Error('operation not permitted'), { code: 'EPERM' }));
    const from = join(work, 'src', 'a.ts');
    await moveWithoutReplacing(from, join(work, 'src', 'moved.ts'), noLinks);
    expect(read('src/moved.ts')).toBe('export const a = 1;\nexport const b = 2;\n');
    expect(existsSync(from)).toBe(false);
    await expect(moveWithoutReplacing(join(work, 'src', 'moved.ts'), join(work, 'README.md'), noLinks)).rejects.toMatchObject({ code: 'EEXIST' });
    expect(read('README.md')).toBe('# Title\n\nText.\n');
    await expect(moveWithoutReplacing(join(work, 'src'), join(work, 'lib'), noLinks)).rejects.toMatchObject({ code: 'EISDIR' });
    expect(existsSync(join(work, 'src', 'moved.ts'))).toBe(true);
  });

  it('counts as made only the directories its own mkdir made', async () => {
    const guard = new PathGuard(work);
    const io = verifiedPatchIo(guard);
    mkdirSync(join(work, 'have'));
    expect(await io.makeParents(join(work, 'have', 'x', 'y', 'file.txt'))).toEqual([join(work, 'have', 'x'), join(work, 'have', 'x', 'y')]);
    expect(await io.makeParents(join(work, 'have', 'x', 'y', 'other.txt'))).toEqual([]);
  });

  it('reports a failure while applying as an error result naming the operation', async () => {
    // A real failure the plan cannot foresee: the file is replaced by a directory after checking.
    const { steps, real } = await checkedPlan([{ op: 'update', path: 'README.md', content: 'x' }, { op: 'add', path: 'src/z.ts', content: 'z' }]);
    mkdirSync(join(work, 'src', 'z.ts'));
    const error = await failure(steps, real);
    expect(error.stepIndex).toBe(1);
    expect(read('README.md')).toBe('# Title\n\nText.\n');
  });
});
