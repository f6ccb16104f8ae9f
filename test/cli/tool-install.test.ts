/** `forge tool install` from a folder, from bare git repositories with a dependency chain (real git clone), and from an npm tarball. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, runProcess, tempDir, writeProject } from '../helpers/project.ts';

const tool = (name: string, version: string, body: string, deps: string[] = []) =>
  `name: ${name}\ndescription: The ${name} tool.\nversion: ${version}\ntags: [read]\n${deps.length ? `dependencies: [${deps.join(', ')}]\n` : ''}parameters:\n  text: { type: string, default: "hello" }\n${body}`;

const SUMMARIZE = (version: string) => tool('summarize', version, 'bash: echo "summary of {text}"\n');
const DIGEST = tool('digest', '1.4.0', 'steps:\n  - tool: summarize\n    args: { text: "{text}" }\n', ['summarize@^2.0.0']);
const META = (range: string) => tool('meta', '1.0.0', 'steps:\n  - tool: digest\n    args: { text: "{text}" }\n', [`digest@${range}`]);

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });

/** A bare repository at root/NAME.git holding `files`, pushed from a working copy. */
function bareRepo(root: string, name: string, files: Record<string, string>): string {
  const work = join(root, `${name}-work`);
  mkdirSync(work, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(work, path, '..'), { recursive: true });
    writeFileSync(join(work, path), text);
  }
  git(work, 'init', '-q', '-b', 'main');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', `${name}`);
  const bare = join(root, `${name}.git`);
  git(root, 'clone', '-q', '--bare', work, bare);
  return bare;
}

function scopes() {
  const home = tempDir('forge-home-');
  const global = tempDir('forge-global-');
  return { home, global, env: { FORGE_HOME: home, FORGE_GLOBAL_TOOLS: global } };
}

describe('forge tool install', () => {
  it('installs a chain of dependencies from bare git repositories with --deps, and the tools run', async () => {
    const root = tempDir('forge-repos-');
    bareRepo(root, 'summarize', { 'tools/summarize.yaml': SUMMARIZE('2.1.0') });
    bareRepo(root, 'digest', { 'tools/digest.yaml': DIGEST, 'forge-tools.yaml': 'sources:\n  summarize: ../summarize.git\n' });
    const meta = bareRepo(root, 'meta', { 'tools/meta.yaml': META('^1.2.0'), 'forge-tools.yaml': 'sources:\n  digest: ../digest.git\n' });
    const { home, env } = scopes();
    const elsewhere = tempDir('forge-cwd-');

    // Without --deps, the missing dependency is named, and where --deps would get it.
    const bare = await forge(['tool', 'install', meta], elsewhere, env);
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.stderr).toContain('meta → digest@^1.2.0: digest is not installed');
    expect(bare.stderr).toContain('run with --deps');

    const installed = await forge(['tool', 'install', `file://${meta}`, '--scope', 'user', '--deps', '--force'], elsewhere, env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toMatch(/installed .*digest 1\.4\.0.*summarize 2\.1\.0/);
    expect(readdirSync(join(home, 'tools')).sort()).toEqual(['digest.yaml', 'meta.yaml', 'summarize.yaml']);

    const ran = await forge(['tool', 'run', 'user/meta', '--param', 'text=news'], elsewhere, env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout.trim()).toBe('summary of news');

    // Again: nothing changes.
    const again = await forge(['tool', 'install', meta, '-u', '--deps'], elsewhere, env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already installed');
  });

  it('refuses an unsatisfied version anywhere in the chain, with the chain in the diagnostic, and installs nothing', async () => {
    const root = tempDir('forge-repos-');
    bareRepo(root, 'summarize', { 'tools/summarize.yaml': SUMMARIZE('1.9.0') });
    bareRepo(root, 'digest', { 'tools/digest.yaml': DIGEST, 'forge-tools.yaml': 'sources:\n  summarize: ../summarize.git\n' });
    const meta = bareRepo(root, 'meta', { 'tools/meta.yaml': META('^1.0.0'), 'forge-tools.yaml': 'sources:\n  digest: ../digest.git\n' });
    const { home, env } = scopes();
    const result = await forge(['tool', 'install', meta, '--scope', 'user', '--deps'], tempDir(), env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('FORGE_INSTALL_VERSION meta → digest → summarize@^2.0.0: ../summarize.git provides summarize 1.9.0, which does not satisfy ^2.0.0');
    expect(result.stderr).toContain('nothing was installed');
    expect(existsSync(join(home, 'tools'))).toBe(false);

    // An installed tool whose version does not fit is refused too (not silently replaced).
    const ok = bareRepo(root, 'summarize3', { 'tools/summarize.yaml': SUMMARIZE('3.0.0') });
    expect((await forge(['tool', 'install', ok, '-u'], tempDir(), env)).code).toBe(0);
    const again = await forge(['tool', 'install', join(root, 'digest.git'), '-u'], tempDir(), env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/user\/summarize .* has summarize 3\.0\.0, which does not satisfy \^2\.0\.0/);
  });

  it('installs from a local folder into the project, and from an npm pack tarball into the global scope', async () => {
    const shared = tempDir('forge-shared-');
    mkdirSync(join(shared, 'tools'));
    writeFileSync(join(shared, 'tools', 'summarize.yaml'), SUMMARIZE('2.0.0'));
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/.keep': '' });
    const { global, env } = scopes();
    const local = await forge(['tool', 'install', shared], project, env);
    expect(local.code, local.stderr).toBe(0);
    expect(local.stdout).toContain('(local scope)');
    expect(existsSync(join(project, 'tools', 'summarize.yaml'))).toBe(true);
    expect((await forge(['tool', 'run', 'summarize', '--param', 'text=x'], project, env)).stdout.trim()).toBe('summary of x');

    const pkg = tempDir('forge-pkg-');
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'text-tools', version: '2.0.0', files: ['tools'], forge: { tools: ['digest'] } }));
    mkdirSync(join(pkg, 'tools'));
    writeFileSync(join(pkg, 'tools', 'digest.yaml'), DIGEST);
    writeFileSync(join(pkg, 'tools', 'unrelated.yaml'), SUMMARIZE('9.0.0').replace('name: summarize', 'name: unrelated'));
    const packed = await runProcess('npm', ['pack', '--silent'], { cwd: pkg });
    expect(packed.code, packed.stderr).toBe(0);
    // digest needs summarize ^2: the user scope has none, the project (local) is not searched from the global scope.
    const refused = await forge(['tool', 'install', join(pkg, 'text-tools-2.0.0.tgz'), '-g'], project, env);
    expect(refused.stderr).toContain('digest → summarize@^2.0.0: summarize is not installed');
    expect(refused.code).toBe(0);
    expect(readdirSync(global)).toEqual(['digest.yaml']);
  });

  it('refuses two files of one source that define one name, naming both files, and writes nothing', async () => {
    const src = tempDir('forge-src-');
    mkdirSync(join(src, 'tools'));
    writeFileSync(join(src, 'tools', 'a.yaml'), 'name: beta\ndescription: B.\nversion: 1.0.0\ntags: [read]\nbash: echo b\n');
    writeFileSync(join(src, 'tools', 'beta.yaml'), 'description: A.\nversion: 1.0.0\ntags: [read]\nbash: echo a\n');
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/.keep': '' });
    const { env } = scopes();
    const refused = await forge(['tool', 'install', src], project, env);
    expect(refused.code).toBe(1);
    // It named the source twice ("from ../src and from ../src"), and neither file.
    expect(refused.stderr).toMatch(/FORGE_INSTALL_CONFLICT two different tools named "beta": \S*tools\/a\.yaml and \S*tools\/beta\.yaml/);
    expect(refused.stderr).toContain('hint: rename one of them');
    expect(readdirSync(join(project, 'tools'))).toEqual(['.keep']);
  });

  it('refuses a tool whose name another file in the scope already defines, with --force too, and writes nothing', async () => {
    const shared = tempDir('forge-shared-');
    mkdirSync(join(shared, 'tools'));
    writeFileSync(join(shared, 'tools', 'greet.yaml'), tool('greet', '1.0.0', 'bash: echo shared-greet\n'));
    const greetPy = '"""\nTool: greet\nDescription: Greets.\n"""\n\ndef execute(args):\n    return "hi"\n';
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greetPy });
    const { home, env } = scopes();
    for (const force of [[], ['--force']]) {
      const local = await forge(['tool', 'install', shared, ...force], project, env);
      expect(local.code).toBe(1);
      expect(local.stderr).toContain('FORGE_INSTALL_EXISTS tools/greet.py already defines a tool named "greet"');
      expect(existsSync(join(project, 'tools', 'greet.yaml'))).toBe(false);
    }
    expect((await forge(['validate'], project, env)).code).toBe(0);

    // The user scope: a greet.yml there is the same name in another file.
    mkdirSync(join(home, 'tools'), { recursive: true });
    writeFileSync(join(home, 'tools', 'greet.yml'), tool('greet', '0.9.0', 'bash: echo mine\n'));
    const user = await forge(['tool', 'install', shared, '--scope', 'user', '--force'], tempDir('forge-cwd-'), env);
    expect(user.code).toBe(1);
    expect(user.stderr).toContain('already defines a tool named "greet"');
    expect(readdirSync(join(home, 'tools'))).toEqual(['greet.yml']);
  });

  it('a dependency named like a member of Object.prototype (constructor) has no source unless sources: names one', async () => {
    const { env } = scopes();
    const folder = tempDir();
    mkdirSync(join(folder, 'tools'));
    writeFileSync(join(folder, 'tools', 'meta.yaml'), tool('meta', '1.0.0', 'steps:\n  - tool: constructor\n    args: { text: "{text}" }\n', ['constructor']));
    const result = await forge(['tool', 'install', folder, '-u', '--deps'], tempDir(), env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('FORGE_INSTALL_DEPENDENCY');
    expect(result.stderr).toContain('names no source for "constructor"');
    expect(result.stderr).not.toMatch(/native code|is not a function/);
  });

  it('says what is wrong with a source that is not one', async () => {
    const { env } = scopes();
    const nope = join(tempDir(), 'nope');
    const missing = await forge(['tool', 'install', nope, '-u'], tempDir(), env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such folder, tarball or git repository');
    // And what a source may be.
    expect(missing.stderr).toContain(`  hint: ${nope} does not exist; a source is a folder, an npm package tarball (.tgz) or a git repository (a URL such as https://host/tools.git, or file:///srv/git/tools.git)\n`);
    const badRepo = await forge(['tool', 'install', 'file:///nonexistent/repo.git', '-u'], tempDir(), env);
    expect(badRepo.code).toBe(1);
    expect(badRepo.stderr).toContain('git clone file:///nonexistent/repo.git failed');
  });
});
