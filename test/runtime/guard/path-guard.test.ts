import { existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { isWithin, PathGuard, PathRefusedError } from '../../../runtime/guard/path-guard.ts';
import { tempDir } from '../../helpers/project.ts';

/**
 *   base/
 *     app/               the work dir
 *       a.txt  sub/b.txt
 *       in-file -> sub/b.txt          in-dir -> sub
 *       out-file -> ../outside/secret.txt     out-dir -> <base>/outside (absolute)
 *       dangling-out -> ../outside/new.txt    dangling-in -> sub/new.txt
 *       chain -> out-dir                      to-sibling -> ../app2
 *       loop-a -> loop-b -> loop-a
 *     app2/x.txt         a sibling sharing the work dir's name as a prefix
 *     outside/secret.txt
 */
let base: string;
let root: string;
let guard: PathGuard;

beforeAll(() => {
  base = tempDir('forge-guard-');
  root = join(base, 'app');
  mkdirSync(join(root, 'sub'), { recursive: true });
  mkdirSync(join(base, 'app2'));
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(root, 'a.txt'), 'a');
  writeFileSync(join(root, 'sub', 'b.txt'), 'b');
  writeFileSync(join(base, 'app2', 'x.txt'), 'x');
  writeFileSync(join(base, 'outside', 'secret.txt'), 'secret');
  const link = (name: string, target: string) => symlinkSync(target, join(root, name));
  link('in-file', 'sub/b.txt');
  link('in-dir', 'sub');
  link('out-file', '../outside/secret.txt');
  link('out-dir', join(base, 'outside'));
  link('dangling-out', '../outside/new.txt');
  link('dangling-in', 'sub/new.txt');
  link('chain', 'out-dir');
  link('to-sibling', '../app2');
  link('loop-a', 'loop-b');
  link('loop-b', 'loop-a');
  guard = new PathGuard(root);
});

describe('PathGuard.resolve allows paths that stay inside', () => {
  it.each([
    ['a.txt', 'a.txt'],
    ['./a.txt', 'a.txt'],
    ['sub/b.txt', 'sub/b.txt'],
    ['sub/../a.txt', 'a.txt'],
    ['sub//b.txt', 'sub/b.txt'],
    ['.', '.'],
    ['', '.'],
    ['new.txt', 'new.txt'],
    ['new/deep/file.txt', 'new/deep/file.txt'],
    ['sub/new.txt', 'sub/new.txt'],
    ['in-file', 'sub/b.txt'],
    ['in-dir/b.txt', 'sub/b.txt'],
    ['in-dir/new.txt', 'sub/new.txt'],
    ['dangling-in', 'sub/new.txt'],
  ])('%j → %s', (input, relative) => {
    const resolved = guard.resolve(input);
    expect(resolved.relative).toBe(relative);
    expect(resolved.absolute).toBe(relative === '.' ? realpathSync(root) : join(realpathSync(root), relative));
  });

  it('allows an absolute path inside the work dir', () => {
    expect(guard.resolve(join(root, 'sub', 'b.txt')).relative).toBe('sub/b.txt');
  });

  it('works when the work dir itself is reached through a symlink', () => {
    const linked = join(base, 'linked-app');
    symlinkSync(root, linked);
    const viaLink = new PathGuard(linked);
    expect(viaLink.resolve('sub/b.txt').absolute).toBe(join(realpathSync(root), 'sub', 'b.txt'));
    expect(viaLink.resolve(join(linked, 'a.txt')).relative).toBe('a.txt');
    expect(() => viaLink.resolve('../outside/secret.txt')).toThrow(/outside the working directory/);
  });
});

describe('PathGuard.resolve refuses paths that end outside', () => {
  it.each([
    ['..', 'the parent directory'],
    ['../outside/secret.txt', '.. out of the work dir'],
    ['sub/../../outside/secret.txt', '.. through a subdirectory'],
    ['/etc/passwd', 'an absolute path elsewhere'],
    ['../app2/x.txt', 'a sibling sharing the name as a prefix'],
    ['out-file', 'a symlinked file pointing outside'],
    ['out-dir/secret.txt', 'a file in a symlinked directory pointing outside'],
    ['out-dir/new.txt', 'a new file in a symlinked directory pointing outside'],
    ['out-dir', 'a symlinked directory pointing outside'],
    ['dangling-out', 'a dangling symlink whose target would be created outside'],
    ['chain/secret.txt', 'a chain of symlinks leading outside'],
    ['to-sibling/x.txt', 'a symlink to the prefix-sharing sibling'],
    ['~/.ssh/id_rsa', 'the home directory'],
  ])('%j (%s)', (input) => {
    const refusal = catchRefusal(() => guard.resolve(input));
    expect(refusal.code).toBe('FORGE_PATH_OUTSIDE');
    expect(refusal.message).toContain('outside the working directory');
    expect(refusal.hint).toContain(realpathSync(root));
  });

  it('refuses the sibling directory by absolute path (/srv/app vs /srv/app2)', () => {
    expect(catchRefusal(() => guard.resolve(join(base, 'app2', 'x.txt'))).code).toBe('FORGE_PATH_OUTSIDE');
  });

  it('names the path as given, never where a symlink leads outside', () => {
    const message = catchRefusal(() => guard.resolve('out-file')).message;
    expect(message).toBe('path "out-file" is outside the working directory');
    expect(message).not.toContain('secret');
  });

  it.each([
    ['loop-a', /too many levels of symbolic links/],
    ['a\0b', /NUL/],
  ])('refuses %j as invalid', (input, message) => {
    const refusal = catchRefusal(() => guard.resolve(input));
    expect(refusal.code).toBe('FORGE_PATH_INVALID');
    expect(refusal.message).toMatch(message);
  });

  it('reports a missing work dir', () => {
    expect(catchRefusal(() => new PathGuard(join(base, 'nope')).resolve('a.txt')).code).toBe('FORGE_WORKDIR_MISSING');
  });
});

describe('isWithin', () => {
  it.each([
    ['/srv/app', '/srv/app', true],
    ['/srv/app', '/srv/app/x', true],
    ['/srv/app', '/srv/app2', false],
    ['/srv/app', '/srv/app2/x', false],
    ['/srv/app', '/srv', false],
    ['/srv/app', '/srv/app/../app2', false],
    ['/', '/anything', true],
  ])('isWithin(%s, %s) = %s', (rootPath, path, expected) => {
    expect(isWithin(rootPath, resolve(path))).toBe(expected);
  });
});

function catchRefusal(run: () => unknown): PathRefusedError {
  try {
    run();
  } catch (err) {
    if (err instanceof PathRefusedError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

// ---------------------------------------------------------------------------
// Property tests: random directory trees with random symlinks (relative and
// absolute, inside, outside, to the prefix-sharing sibling, dangling, looping),
// and random paths through them. The oracle is the file system itself: write
// a file at the path the guard was asked about and see where it lands.

const NAMES = ['a', 'b', 'l0', 'l1', 'l2'];
const segment = fc.constantFrom('a', 'b', 'l0', 'l1', 'l2', 'f', 'new', '..', '.');
const linkTarget = fc.oneof(
  fc.constantFrom('a', 'b', 'a/b', 'f', 'new', '..', '../..', '../outside', '../app2', '../outside/f', 'l0', 'l1', 'l2', '.', 'missing/deeper'),
  fc.constantFrom('ROOT', 'ROOT/a', 'OUTSIDE', 'OUTSIDE/f', 'SIBLING', 'BASE'),
);
const layout = fc.record({
  dirs: fc.uniqueArray(fc.constantFrom('a', 'b', 'a/a', 'a/b', 'b/a'), { maxLength: 5 }),
  links: fc.array(fc.record({ parent: fc.constantFrom('', 'a', 'b'), name: fc.constantFrom('l0', 'l1', 'l2'), target: linkTarget }), { maxLength: 5 }),
  files: fc.uniqueArray(fc.constantFrom('f', 'a/f', 'b/f'), { maxLength: 3 }),
});
const query = fc.record({ segments: fc.array(segment, { minLength: 1, maxLength: 6 }), absolute: fc.boolean() });

function buildLayout(spec: typeof layout extends fc.Arbitrary<infer T> ? T : never) {
  const dir = tempDir('forge-guard-prop-');
  const rootDir = join(dir, 'app');
  const outside = join(dir, 'outside');
  const sibling = join(dir, 'app2');
  for (const d of [rootDir, outside, sibling]) mkdirSync(d, { recursive: true });
  writeFileSync(join(outside, 'f'), 'outside');
  for (const d of spec.dirs) mkdirSync(join(rootDir, d), { recursive: true });
  for (const f of spec.files) {
    if (existsSync(dirname(join(rootDir, f)))) writeFileSync(join(rootDir, f), 'inside');
  }
  for (const link of spec.links) {
    const at = join(rootDir, link.parent, link.name);
    if (!existsSync(join(rootDir, link.parent)) || lstatExists(at)) continue;
    const target = link.target.replace(/^ROOT/, rootDir).replace(/^OUTSIDE/, outside).replace(/^SIBLING/, sibling).replace(/^BASE/, dir);
    symlinkSync(target, at);
  }
  return { dir, rootDir, outsideDirs: [outside, sibling, dir] };
}

function lstatExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Every entry outside the work dir, for comparing before and after a write. */
function snapshotOutside(dir: string, rootDir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (path === rootDir) continue;
      out.push(path);
      if (entry.isDirectory()) walk(path);
    }
  };
  walk(dir);
  return out.sort();
}

/** Writes a file at `path` as any program would; returns where it landed, or undefined if the OS refused. */
function writeThrough(path: string): string | undefined {
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, 'probe', { flag: 'a' });
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

describe('PathGuard properties', () => {
  it('never accepts a path whose file lands outside, and accepts every path whose file lands inside', () => {
    fc.assert(
      fc.property(layout, query, (spec, q) => {
        const { dir, rootDir } = buildLayout(spec);
        try {
          const realRoot = realpathSync(rootDir);
          const input = (q.absolute ? `${rootDir}/` : '') + q.segments.join('/');
          let accepted: string | undefined;
          let refusal: PathRefusedError | undefined;
          try {
            accepted = new PathGuard(rootDir).resolve(input).absolute;
          } catch (err) {
            if (!(err instanceof PathRefusedError)) throw err;
            refusal = err;
          }
          const before = snapshotOutside(dir, rootDir);
          // The guard normalizes ".." by name before following links; a tool then
          // uses the path it returned. Write where that lexical path leads.
          const landed = writeThrough(resolve(realRoot, input));
          const after = snapshotOutside(dir, rootDir);
          if (accepted !== undefined) {
            expect(isWithin(realRoot, accepted)).toBe(true);
            expect(after).toEqual(before);
            if (landed !== undefined) expect(landed).toBe(accepted);
          } else if (landed !== undefined) {
            expect(refusal!.code === 'FORGE_PATH_INVALID' || !isWithin(realRoot, landed), `refused ${input} (${refusal!.message}) but it landed at ${landed}`).toBe(true);
          }
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 300 },
    );
  });

  it('accepts every plain relative path (names only, no links, no ..)', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,11}$/).filter((s) => s !== '..' && s !== '.'), { minLength: 1, maxLength: 6 }), (parts) => {
        const path = parts.join('/');
        expect(guard.resolve(path).relative).toBe(parts.join('/'));
      }),
      { numRuns: 200 },
    );
  });

  it('refuses every path that climbs out with more ".." than it went down', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...NAMES.slice(0, 2), 'sub'), { maxLength: 4 }), fc.integer({ min: 1, max: 3 }), (down, extra) => {
        const path = [...down, ...Array(down.length + extra).fill('..'), 'outside', 'secret.txt'].join('/');
        expect(() => guard.resolve(path)).toThrow(PathRefusedError);
      }),
      { numRuns: 100 },
    );
  });

  it('refuses absolute paths under the home directory unless they are in the work dir', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('.ssh', '.config', 'docs', 'id_rsa'), { minLength: 1, maxLength: 3 }), (parts) => {
        const target = join(homedir(), ...parts);
        if (isWithin(realpathSync(root), target)) return;
        expect(() => guard.resolve(target)).toThrow(/outside the working directory/);
      }),
      { numRuns: 50 },
    );
  });
});
