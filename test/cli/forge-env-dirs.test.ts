/**
 * FORGE_CACHE_DIR, FORGE_HOME and FORGE_GLOBAL_TOOLS naming a file (or a path under one) were ignored in
 * silence: the build ran without the cache and the user and global scopes read as empty. Each command now says so (FORGE_ENV_DIRECTORY), naming
 * the variable and the path; those that must write there refuse with a diagnostic instead of Node's ENOTDIR.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { forge, forgeBin, minimalConfig, runProcess, tempDir, writeProject, type ProcessResult } from '../helpers/project.ts';

type Json = Record<string, any>;

let project: string;
let aFile: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
  aFile = join(tempDir('forge-env-dirs-'), 'not-a-directory');
  writeFileSync(aFile, 'a file\n');
  env = { FORGE_HOME: tempDir('forge-home-'), FORGE_GLOBAL_TOOLS: tempDir('forge-global-') };
});

const envWarning = (variable: string, path: string) => ({ severity: 'warning', code: 'FORGE_ENV_DIRECTORY', message: expect.stringContaining(`${variable}=${path} `), hint: expect.stringContaining(variable) });

describe('FORGE_CACHE_DIR that cannot be a directory', () => {
  it('forge build warns, names the variable and the path, and builds; a cached build says it again', async () => {
    const first = await forge(['build', '--json'], project, { ...env, FORGE_CACHE_DIR: aFile });
    expect(first.code, first.stderr).toBe(0);
    expect((JSON.parse(first.stdout) as Json).warnings).toEqual([expect.objectContaining(envWarning('FORGE_CACHE_DIR', aFile))]);
    expect(first.stderr).toBe('');
    const again = await forge(['build'], project, { ...env, FORGE_CACHE_DIR: aFile });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('up to date (cached)');
    expect(again.stderr).toContain(`FORGE_ENV_DIRECTORY FORGE_CACHE_DIR=${aFile} is a file, not a directory`);
    expect(again.stderr).toContain('hint: point FORGE_CACHE_DIR at a directory');
  }, 60_000);

  it('a path under a file names the file in the way', async () => {
    const under = join(aFile, 'cache');
    const result = await forge(['build', '--json'], project, { ...env, FORGE_CACHE_DIR: under });
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as Json).warnings).toEqual([expect.objectContaining({ code: 'FORGE_ENV_DIRECTORY', message: expect.stringContaining(`FORGE_CACHE_DIR=${under} cannot be a directory: ${aFile} is a file`) })]);
  }, 60_000);

  it('a directory that does not exist yet is fine: no warning', async () => {
    const result = await forge(['build', '--json'], project, { ...env, FORGE_CACHE_DIR: join(tempDir('forge-cache-'), 'made', 'later') });
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as Json).warnings).toEqual([]);
  }, 60_000);

  it('forge doctor warns of it, in --json and as text', async () => {
    const json = await forge(['doctor', '--json'], project, { ...env, FORGE_CACHE_DIR: aFile });
    expect((JSON.parse(json.stdout) as Json).warnings).toEqual(expect.arrayContaining([expect.objectContaining(envWarning('FORGE_CACHE_DIR', aFile))]));
    const text = await forge(['doctor'], project, { ...env, FORGE_CACHE_DIR: aFile });
    expect(text.stderr).toContain(`FORGE_ENV_DIRECTORY FORGE_CACHE_DIR=${aFile} is a file`);
  });
});

/**
 * A directory that is there but that this user cannot write. The suite runs as root, whom a mode does not
 * stop: the CLI runs as nobody (its project and home its own), or as root with the directory a read-only mount.
 */
describe('a directory Forge cannot write', () => {
  let ownProject: string;
  let ownHome: string;
  let readOnly: string;
  beforeAll(() => {
    expect(process.getuid?.(), 'these tests run the CLI as nobody, which takes root (as the CI runs)').toBe(0);
    ownProject = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    ownHome = tempDir('forge-nobody-home-');
    execFileSync('chown', ['-R', 'nobody:nogroup', ownProject, ownHome]);
    readOnly = tempDir('forge-not-writable-');
    chmodSync(readOnly, 0o755);
  });
  const asNobody = (args: string[], extraEnv: NodeJS.ProcessEnv): Promise<ProcessResult> =>
    runProcess('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, forgeBin, ...args], { cwd: ownProject, env: { HOME: ownHome, ...env, ...extraEnv } });

  // The build kept nothing in the cache, and said nothing of it.
  it('forge build warns of a FORGE_CACHE_DIR it cannot write (EACCES), in --json and as text, and builds', async () => {
    const json = await asNobody(['build', '--json'], { FORGE_CACHE_DIR: readOnly });
    expect(json.code, json.stderr + json.stdout).toBe(0);
    expect((JSON.parse(json.stdout) as Json).warnings).toEqual([expect.objectContaining({ ...envWarning('FORGE_CACHE_DIR', readOnly), message: `FORGE_CACHE_DIR=${readOnly} cannot be written: ${readOnly} is not writable by this user (EACCES): nothing is kept in Forge's machine-wide cache` })]);
    const under = join(readOnly, 'made', 'later');
    const text = await asNobody(['build'], { FORGE_CACHE_DIR: under });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain(`FORGE_ENV_DIRECTORY FORGE_CACHE_DIR=${under} cannot be written: ${readOnly} is not writable by this user (EACCES)`);
    expect(text.stderr).toContain('hint: point FORGE_CACHE_DIR at a directory this user can write');
    expect(readdirSync(readOnly)).toEqual([]);
    const doctor = await asNobody(['doctor', '--json'], { FORGE_CACHE_DIR: readOnly });
    expect((JSON.parse(doctor.stdout) as Json).warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'FORGE_ENV_DIRECTORY', message: expect.stringContaining(`FORGE_CACHE_DIR=${readOnly} cannot be written`) })]));
  }, 60_000);

  it('forge build warns of the default cache directory it cannot write, FORGE_CACHE_DIR unset', async () => {
    const result = await asNobody(['build', '--json'], { HOME: readOnly, XDG_CACHE_HOME: '', FORGE_CACHE_DIR: '' });
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect((JSON.parse(result.stdout) as Json).warnings).toEqual([expect.objectContaining({ code: 'FORGE_ENV_DIRECTORY', message: `${join(readOnly, '.cache', 'forge')} (FORGE_CACHE_DIR is not set) cannot be written: ${readOnly} is not writable by this user (EACCES): nothing is kept in Forge's machine-wide cache`, hint: 'point FORGE_CACHE_DIR at a directory this user can write' })]);
  }, 60_000);

  it('forge build warns of a FORGE_CACHE_DIR on a read-only mount (EROFS)', async () => {
    const result = await runProcess('bwrap', ['--bind', '/', '/', '--ro-bind', readOnly, readOnly, '--dev', '/dev', '--proc', '/proc', process.execPath, forgeBin, 'build', '--json'], { cwd: project, env: { ...env, FORGE_CACHE_DIR: readOnly } });
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect((JSON.parse(result.stdout) as Json).warnings).toEqual([expect.objectContaining({ code: 'FORGE_ENV_DIRECTORY', message: expect.stringContaining(`FORGE_CACHE_DIR=${readOnly} cannot be written: ${readOnly} is on a read-only file system (EROFS)`) })]);
  }, 60_000);

  // They failed with Node's "EACCES: permission denied, mkdir ..." as FORGE_INTERNAL.
  it.each([
    { command: 'add', variable: 'FORGE_HOME', scope: 'user' },
    { command: 'add', variable: 'FORGE_GLOBAL_TOOLS', scope: 'global' },
    { command: 'install', variable: 'FORGE_HOME', scope: 'user' },
  ])('forge tool $command --scope $scope refuses a $variable it cannot write with FORGE_FILE_PERMISSION, not EACCES', async ({ command, variable, scope }) => {
    const args = command === 'add' ? ['tool', 'add', 'hi', '--description', 'Says hi.', '--bash', 'echo hi', '--scope', scope] : ['tool', 'install', '.', '--scope', scope];
    const json = await asNobody([...args, '--json'], { [variable]: readOnly });
    expect(json.code, json.stderr).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_PERMISSION', message: `${variable}=${readOnly} cannot be written: ${readOnly} is not writable by this user (EACCES): nothing was written`, hint: expect.stringContaining(`point ${variable} at a directory this user can write`) } });
    const text = await asNobody(args, { [variable]: readOnly });
    expect(text.code).toBe(1);
    expect(text.stderr).toContain('FORGE_FILE_PERMISSION');
    expect(text.stderr).not.toContain('permission denied');
  });

  it('forge tool add --scope user refuses a FORGE_HOME on a read-only mount with FORGE_FILE_READ_ONLY, not EROFS', async () => {
    const args = ['tool', 'add', 'hi', '--description', 'Says hi.', '--bash', 'echo hi', '--scope', 'user', '--json'];
    const result = await runProcess('bwrap', ['--bind', '/', '/', '--ro-bind', readOnly, readOnly, '--dev', '/dev', '--proc', '/proc', process.execPath, forgeBin, ...args], { cwd: project, env: { ...env, FORGE_HOME: readOnly } });
    expect(result.code, result.stderr).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_READ_ONLY', message: `FORGE_HOME=${readOnly} cannot be written: ${readOnly} is on a read-only file system (EROFS): nothing was written` } });
  });

  it('forge tool add --scope global, FORGE_GLOBAL_TOOLS unset, names the default directory a user cannot write', async () => {
    const json = await asNobody(['tool', 'add', 'hi', '--description', 'Says hi.', '--bash', 'echo hi', '--scope', 'global', '--json'], { FORGE_GLOBAL_TOOLS: '' });
    expect(json.code, json.stderr).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_PERMISSION', message: expect.stringMatching(/^\/usr\/local\/share\/forge\/tools \(FORGE_GLOBAL_TOOLS is not set\) cannot be written: \/usr\/local\S* is not writable by this user \(EACCES\): nothing was written$/), hint: 'point FORGE_GLOBAL_TOOLS at a directory this user can write' } });
  });
});

// The variables that move a shared scope's directory: FORGE_HOME the user scope's, FORGE_GLOBAL_TOOLS the global one's.
describe.each([
  { variable: 'FORGE_HOME', scope: 'user' },
  { variable: 'FORGE_GLOBAL_TOOLS', scope: 'global' },
])('$variable that cannot be a directory', ({ variable, scope }) => {
  it(`forge build and forge doctor warn that the ${scope} scope is not used`, async () => {
    const build = await forge(['build', '--json'], project, { ...env, [variable]: aFile });
    expect(build.code, build.stderr).toBe(0);
    expect((JSON.parse(build.stdout) as Json).warnings).toEqual([expect.objectContaining(envWarning(variable, aFile))]);
    const doctor = await forge(['doctor', '--json'], project, { ...env, [variable]: aFile });
    expect((JSON.parse(doctor.stdout) as Json).warnings).toEqual(expect.arrayContaining([expect.objectContaining(envWarning(variable, aFile))]));
  }, 60_000);

  // --scope global listed Node's ENOTDIR for a file; the user scope read as empty.
  it(`forge tool list warns that the ${scope} scope is not read, as text and in --json (--scope ${scope} too)`, async () => {
    const listed = await forge(['tool', 'list', '--json'], project, { ...env, [variable]: aFile });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ ok: true, tools: [{ name: 'uuid_generate' }], warnings: [envWarning(variable, aFile)] });
    const scoped = await forge(['tool', 'list', '--scope', scope, '--json'], project, { ...env, [variable]: aFile });
    expect(scoped.code, scoped.stderr).toBe(0);
    expect(JSON.parse(scoped.stdout)).toMatchObject({ ok: true, tools: [], warnings: [envWarning(variable, aFile)] });
    const text = await forge(['tool', 'list', '--scope', scope], project, { ...env, [variable]: aFile });
    expect(text.stderr).toContain(`FORGE_ENV_DIRECTORY ${variable}=${aFile} is a file, not a directory`);
    const under = join(aFile, 'tools');
    const underText = await forge(['tool', 'list', '--scope', scope], project, { ...env, [variable]: under });
    expect(underText.code, underText.stderr).toBe(0);
    expect(underText.stderr).toContain(`FORGE_ENV_DIRECTORY ${variable}=${under} cannot be a directory: ${aFile} is a file`);
  });

  // They searched the scope and said only "no tool named", or failed a dependency, with no word of the variable.
  it(`forge tool run, tool describe and validate warn where they search the ${scope} scope, and only there`, async () => {
    const needsScope = writeProject({ 'forge.yaml': minimalConfig(), 'tools/meta.yaml': `description: Meta.\ntags: [read]\ndependencies: [${scope}/shout]\nsteps:\n  - name: call\n    tool: ${scope}/shout\n` });
    const unusable = { ...env, [variable]: aFile };
    const warningsOf = (stdout: string) => (JSON.parse(stdout) as Json).warnings as Json[];
    const searched = [
      await forge(['tool', 'run', `${scope}/shout`, '--json'], project, unusable),
      await forge(['tool', 'describe', `${scope}/shout`, '--json'], project, unusable),
      await forge(['validate', '--json'], needsScope, unusable),
    ];
    for (const result of searched) {
      expect(result.code, result.stdout).toBe(1);
      expect(warningsOf(result.stdout)).toEqual([expect.objectContaining(envWarning(variable, aFile))]);
    }
    const text = await forge(['tool', 'run', `${scope}/shout`], project, unusable);
    expect(text.stderr).toContain(`FORGE_ENV_DIRECTORY ${variable}=${aFile} is a file, not a directory`);
    // A project tool, a project whose tools need no scope: nothing searched there, nothing said.
    const notSearched = [
      await forge(['tool', 'run', 'uuid_generate', '--json'], project, unusable),
      await forge(['tool', 'describe', 'uuid_generate', '--json'], project, unusable),
      await forge(['validate', '--json'], project, unusable),
    ];
    for (const result of notSearched) {
      expect(result.code, result.stdout).toBe(0);
      expect(warningsOf(result.stdout)).toEqual([]);
    }
  });

  it(`forge build and forge tool list say it once where the project's tools search the ${scope} scope too`, async () => {
    const needsScope = writeProject({ 'forge.yaml': minimalConfig(), 'tools/meta.yaml': `description: Meta.\ntags: [read]\ndependencies: [${scope}/shout]\nsteps:\n  - name: call\n    tool: ${scope}/shout\n` });
    const unusable = { ...env, [variable]: aFile };
    const envWarnings = (stdout: string) => ((JSON.parse(stdout) as Json).warnings as Json[]).filter((w) => w.code === 'FORGE_ENV_DIRECTORY');
    const built = await forge(['build', '--json'], needsScope, unusable);
    expect(envWarnings(built.stdout)).toEqual([expect.objectContaining(envWarning(variable, aFile))]);
    const listed = await forge(['tool', 'list', '--json'], needsScope, unusable);
    expect(envWarnings(listed.stdout)).toEqual([expect.objectContaining(envWarning(variable, aFile))]);
    const text = await forge(['tool', 'list'], needsScope, unusable);
    expect(text.stderr.split('FORGE_ENV_DIRECTORY').length - 1).toBe(1);
  }, 60_000);

  it.each([
    { command: 'forge tool add', args: ['tool', 'add', 'hi', '--description', 'Says hi.', '--bash', 'echo hi', '--scope', scope] },
    { command: 'forge tool install', args: ['tool', 'install', '.', '--scope', scope] },
  ])(`$command --scope ${scope} refuses with FORGE_FILE_NOT_DIRECTORY, not EEXIST or ENOTDIR`, async ({ args }) => {
    const json = await forge([...args, '--json'], project, { ...env, [variable]: aFile });
    expect(json.code, json.stderr).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_NOT_DIRECTORY', message: `${variable}=${aFile} is a file, not a directory: nothing was written`, hint: expect.stringContaining(`point ${variable} at a directory`) } });
    for (const path of [aFile, join(aFile, 'tools')]) {
      const text = await forge(args, project, { ...env, [variable]: path });
      expect(text.code).toBe(1);
      expect(text.stderr).toContain('FORGE_FILE_NOT_DIRECTORY');
      expect(text.stderr).not.toMatch(/ENOTDIR|EEXIST/);
    }
  });
});
