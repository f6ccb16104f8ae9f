/**
 * The launcher corpus: for every program in the launcher policy, the forms
 * an attacker would try to make it run another program (long, short,
 * abbreviated and "="-joined options, clustered flags, config from the
 * repository and the environment, URLs), each run through cli_execute with
 * the real binary and proven refused — or, where the program is allowed to
 * run, proven harmless — by a marker file that must never appear. Benign
 * uses of the same programs still work.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resolveAllowlist, type ResolvedBinary } from '../../../runtime/guard/command-guard.ts';
import { checkLaunch } from '../../../runtime/guard/launcher-check.ts';
import { LAUNCHER_POLICY } from '../../../runtime/guard/launcher-policy.ts';
import { tempDir } from '../../helpers/project.ts';
import { tools, type ToolHarness } from '../../helpers/tools.ts';

let base: string;
let work: string;
let marker: string;
let t: ToolHarness;

const PROGRAMS = ['git', 'find', 'xargs', 'env', 'awk', 'sed', 'tar', 'ssh', 'make', 'perl', 'python3', 'node', 'less', 'man', 'vim', 'sort', 'split', 'zip', 'rg', 'wget', 'patch', 'timeout', 'nice', 'nohup', 'stdbuf', 'setsid', 'time', 'watch', 'cat'];
const PATH = `${process.execPath.replace(/\/node$/, '')}:/usr/bin:/bin`;

beforeAll(async () => {
  base = tempDir('forge-launch-');
  work = join(base, 'work');
  const home = join(base, 'home');
  mkdirSync(work);
  mkdirSync(home);
  marker = join(base, 'PWNED');
  writeFileSync(join(work, 'file.txt'), 'alpha x\nbeta y\n');
  writeFileSync(join(work, 'prog.awk'), `BEGIN { system("touch ${marker}") }\n`);
  writeFileSync(join(work, 'script.sed'), `1e touch ${marker}\n`);
  writeFileSync(join(work, 'evil.cfg'), `[core]\n\tfsmonitor = touch ${marker}\n`);
  writeFileSync(join(work, 'ssh_config'), `Host *\n  ProxyCommand touch ${marker}\n`);
  writeFileSync(join(work, 'x.js'), `require('node:fs').writeFileSync(${JSON.stringify(marker)}, '')\n`);
  mkdirSync(join(work, 'tpl', 'hooks'), { recursive: true });
  writeFileSync(join(work, 'tpl', 'hooks', 'post-checkout'), `#!/bin/sh\ntouch ${marker}\n`);
  chmodSync(join(work, 'tpl', 'hooks', 'post-checkout'), 0o755);
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: { PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'pipe' });
  // A repository in the work dir, and one to clone from.
  for (const repo of [work, join(work, 'src')]) {
    mkdirSync(repo, { recursive: true });
    git(repo, 'init', '-q');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'first');
  }
  execFileSync('tar', ['-cf', join(work, 'a.tar'), '-C', work, 'file.txt']);
  execFileSync('zip', ['-q', join(work, 'a.zip'), 'file.txt'], { cwd: work });
  t = await tools(['cli_execute'], { workDir: work, env: { PATH, HOME: home, LANG: 'C.UTF-8' }, config: { cli_execute: { allowed_binaries: PROGRAMS, timeout: 20 } } });
});

beforeEach(() => {
  rmSync(marker, { force: true });
});

const M = '@M';
const sub = (args: string[]) => args.map((a) => a.replaceAll(M, marker));

/** Every case tried, per class, for the closing note. */
export const tried = { refused: 0, harmless: 0, benign: 0, policyOnly: 0 };

// [program, args, stdin?] — each must be refused, and the marker must not appear.
const ATTACKS: [string, string[], string?][] = [
  // git: aliases, -c config, --config-env, --exec-path
  ['git', ['-c', `alias.x=!touch ${M}`, 'x']],
  ['git', [`-calias.x=!touch ${M}`, 'x']],
  ['git', ['-c', `core.fsmonitor=touch ${M}`, 'status']],
  ['git', ['-c', `CORE.FSMONITOR=touch ${M}`, 'status']],
  ['git', ['-c', `core.sshCommand=touch ${M}`, 'ls-remote', 'ssh://h/x']],
  ['git', ['-c', `core.pager=touch ${M}`, '-p', 'log']],
  ['git', ['-c', `core.editor=touch ${M}`, 'commit', '--allow-empty']],
  ['git', ['-c', 'core.hooksPath=tpl/hooks', 'commit', '--allow-empty', '-m', 'x']],
  ['git', ['-c', `diff.external=touch ${M}`, 'diff', 'HEAD']],
  ['git', ['-c', `credential.helper=!touch ${M}`, 'ls-remote', 'http://127.0.0.1:1/x']],
  ['git', ['-c', 'include.path=evil.cfg', 'status']],
  ['git', ['-c', 'protocol.ext.allow=always', 'ls-remote', `ext::touch ${M}`]],
  ['git', ['--config-env=core.fsmonitor=PATH', 'status']],
  ['git', ['--config-env', 'core.pager=HOME', 'log']],
  ['git', ['--exec-path=tpl', 'status']],
  ['git', ['--exec-p=tpl', 'status']],
  // git: remote programs, in every spelling
  ['git', ['clone', `--upload-pack=touch ${M}`, 'src', 'd1']],
  ['git', ['clone', `--upload-p=touch ${M}`, 'src', 'd2']],
  ['git', ['clone', '--upload-pack', `touch ${M}`, 'src', 'd3']],
  ['git', ['clone', '-u', `touch ${M}`, 'src', 'd4']],
  ['git', ['clone', `-utouch ${M}`, 'src', 'd5']],
  ['git', ['clone', '-qu', `touch ${M}`, 'src', 'd6']],
  ['git', ['clone', '--template=tpl', 'src', 'd7']],
  ['git', ['clone', '--templ', 'tpl', 'src', 'd8']],
  ['git', ['clone', '-c', `core.fsmonitor=touch ${M}`, 'src', 'd9']],
  ['git', ['clone', `--config=core.fsmonitor=touch ${M}`, 'src', 'd10']],
  ['git', ['fetch', `--upload-pack=touch ${M}`, 'src']],
  ['git', ['pull', `--upload-pa=touch ${M}`, 'src']],
  ['git', ['ls-remote', `--upload-pack=touch ${M}`, 'src']],
  ['git', ['fetch-pack', `--exec=touch ${M}`, 'src']],
  ['git', ['push', `--receive-pack=touch ${M}`, 'src']],
  ['git', ['push', `--rec=touch ${M}`, 'src']],
  ['git', ['push', `--exec=touch ${M}`, 'src']],
  ['git', ['send-pack', `--receive-pack=touch ${M}`, 'src']],
  ['git', ['archive', `--exec=touch ${M}`, '--remote=src', 'HEAD']],
  // git: transports that run programs
  ['git', ['ls-remote', `ext::touch ${M}`]],
  ['git', ['clone', `ext::sh -c touch% ${M}`, 'd11']],
  ['git', ['fetch', 'fd::3']],
  ['git', ['ls-remote', 'ssh://localhost/x']],
  ['git', ['remote', 'add', 'o', `ext::touch ${M}`]],
  ['git', ['-c', `url.ext::touch ${M}#.insteadOf=https://`, 'ls-remote', 'https://x/y']],
  // git: subcommands that run programs
  ['git', ['rebase', '--exec', `touch ${M}`, 'HEAD']],
  ['git', ['rebase', '-x', `touch ${M}`, 'HEAD']],
  ['git', ['rebase', '-ix', `touch ${M}`, 'HEAD']],
  ['git', ['rebase', `--exe=touch ${M}`, 'HEAD']],
  ['git', ['bisect', 'run', 'touch', M]],
  ['git', ['difftool', '-x', `touch ${M}`, 'HEAD']],
  ['git', ['mergetool', '--tool-help']],
  ['git', ['filter-branch', '--tree-filter', `touch ${M}`]],
  ['git', ['grep', '-O', `touch ${M}`, 'x']],
  ['git', ['grep', `--open-files-in-pager=touch ${M}`, 'x']],
  ['git', ['grep', `--open=touch ${M}`, 'x']],
  ['git', ['help', '-w', 'log']],
  ['git', ['help', '--web', 'log']],
  ['git', ['submodule', 'foreach', `touch ${M}`]],
  ['git', ['send-email', 'x']],
  ['git', ['daemon']],
  ['git', ['upload-pack', '.']],
  ['git', ['instaweb']],
  ['git', ['maintenance', 'start']],
  ['git', ['maintenance', 'register']],
  // find
  ['find', ['.', '-exec', 'touch', M, ';']],
  ['find', ['.', '-exec', 'touch', M, '+']],
  ['find', ['.', '-execdir', 'touch', M, ';']],
  ['find', ['.', '-ok', 'touch', M, ';'], 'y\n'],
  ['find', ['.', '-okdir', 'touch', M, ';'], 'y\n'],
  ['find', ['.', '-fprint', M]],
  ['find', ['.', '-fprint0', M]],
  ['find', ['.', '-fprintf', M, '%p']],
  ['find', ['.', '-fls', M]],
  ['find', ['.', '-name', 'nothing', '-delete']],
  ['find', ['-L', '.', '-maxdepth', '1', '-exec', 'touch', M, ';']],
  // xargs
  ['xargs', ['touch', M]],
  ['xargs', [], `touch ${M}`],
  ['xargs', ['-I{}', 'touch', '{}'], M],
  ['xargs', ['-a', 'file.txt']],
  // env and the other wrappers
  ['env', ['touch', M]],
  ['env', ['-S', `touch ${M}`]],
  ['env', [`--split-string=touch ${M}`]],
  ['env', [`--sp=touch ${M}`]],
  ['env', ['-iS', `touch ${M}`]],
  ['env', ['-i', 'touch', M]],
  ['env', ['FOO=1', 'touch', M]],
  ['env', ['PATH=tpl', 'git', 'status']],
  ['env', ['LD_PRELOAD=./x.so', 'git', 'status']],
  ['env', [`GIT_CONFIG_PARAMETERS='core.fsmonitor'='touch ${M}'`, 'git', 'status']],
  ['env', ['GIT_CONFIG_COUNT=1', 'GIT_CONFIG_KEY_0=core.fsmonitor', `GIT_CONFIG_VALUE_0=touch ${M}`, 'git', 'status']],
  ['env', ['git', '-c', `core.fsmonitor=touch ${M}`, 'status']],
  ['env', ['-u', 'X', 'find', '.', '-exec', 'touch', M, ';']],
  ['env', ['--', 'xargs', 'touch', M]],
  ['env', ['env', 'env', 'env', 'env', 'env', 'cat', 'file.txt']],
  ['timeout', ['5', 'touch', M]],
  ['timeout', ['-s', 'KILL', '5', 'find', '.', '-exec', 'touch', M, ';']],
  ['timeout', ['--signal=KILL', '5', 'xargs', 'touch', M]],
  ['nice', ['-n', '5', 'git', '-c', `alias.x=!touch ${M}`, 'x']],
  ['nice', ['timeout', '5', 'env', 'touch', M]],
  ['nohup', ['touch', M]],
  ['nohup', ['awk', `BEGIN{system("touch ${M}")}`]],
  ['stdbuf', ['-o0', 'sed', `1e touch ${M}`, 'file.txt']],
  ['stdbuf', ['-o', '0', 'tar', '-xf', 'a.tar', `--to-command=touch ${M}`]],
  ['setsid', ['touch', M]],
  ['time', ['-o', 'out.txt', 'touch', M]],
  ['time', ['find', '.', '-exec', 'touch', M, ';']],
  ['watch', ['-n', '1', `touch ${M}`]],
  ['watch', ['-x', 'touch', M]],
  // awk (mawk here)
  ['awk', [`BEGIN{system("touch ${M}")}`]],
  ['awk', [`BEGIN { system ("touch ${M}") }`]],
  ['awk', [`BEGIN{print "x" | "touch ${M}"}`]],
  ['awk', [`BEGIN{"touch ${M}" | getline}`]],
  ['awk', [`BEGIN{cmd="touch ${M}"; cmd | getline x}`]],
  ['awk', [`BEGIN{printf "x" > "${M}"}`]],
  ['awk', [`BEGIN{print "x" >> "${M}"}`]],
  ['awk', [`BEGIN{print "x">"${M}"}`]],
  ['awk', ['-f', 'prog.awk']],
  ['awk', ['-fprog.awk']],
  ['awk', ['--file=prog.awk']],
  ['awk', ['-W', 'exec', 'prog.awk']],
  ['awk', ['-v', 'x=1', `BEGIN{system("touch ${M}")}`]],
  ['awk', ['-F:', `{system("touch ${M}")}`, 'file.txt']],
  ['awk', ['--', `BEGIN{system("touch ${M}")}`]],
  ['awk', ['-e', `BEGIN{system("touch ${M}")}`]],
  ['awk', [`--source=BEGIN{system("touch ${M}")}`]],
  ['awk', ['@load "x"; BEGIN{}']],
  // sed
  ['sed', [`e touch ${M}`, 'file.txt']],
  ['sed', [`1e touch ${M}`, 'file.txt']],
  ['sed', [`s/alpha/touch ${M}/e`, 'file.txt']],
  ['sed', [`s,alpha,touch ${M},ge`, 'file.txt']],
  ['sed', [`s#alpha#touch ${M}#1e`, 'file.txt']],
  ['sed', [`s:alpha:touch ${M}:pe`, 'file.txt']],
  ['sed', [`s/alpha/touch \/tmp\/x/e`, 'file.txt']],
  ['sed', [`s|alpha|touch ${M}|e`, 'file.txt']],
  ['sed', [`s|[|]*alpha|touch ${M}|e`, 'file.txt']],
  ['sed', [`s/alpha/touch ${M}/e`, 'file.txt']],
  ['sed', [`s/a\\/b/x/;1e touch ${M}`, 'file.txt']],
  ['sed', [`s/alpha/x/w ${M}`, 'file.txt']],
  ['sed', [`w ${M}`, 'file.txt']],
  ['sed', [`1W ${M}`, 'file.txt']],
  ['sed', ['-n', `w ${M}`, 'file.txt']],
  ['sed', ['-e', 'p', '-e', `e touch ${M}`, 'file.txt']],
  ['sed', [`--expression=e touch ${M}`, 'file.txt']],
  ['sed', [`--expr=e touch ${M}`, 'file.txt']],
  ['sed', ['--expression', `e touch ${M}`, 'file.txt']],
  ['sed', ['-ne', `1e touch ${M}`, 'file.txt']],
  ['sed', [`-ne1e touch ${M}`, 'file.txt']],
  ['sed', ['-f', 'script.sed', 'file.txt']],
  ['sed', ['--file=script.sed', 'file.txt']],
  ['sed', ['-fscript.sed', 'file.txt']],
  ['sed', [`/alpha/,/beta/ { e touch ${M}`, 'file.txt']],
  ['sed', [`$!{e touch ${M}`, 'file.txt']],
  ['sed', [`y/a/b/;e touch ${M}`, 'file.txt']],
  ['sed', [`\\,alpha, e touch ${M}`, 'file.txt']],
  ['sed', [`1!e touch ${M}`, 'file.txt']],
  ['sed', ['-i', `1e touch ${M}`, 'file.txt']],
  ['sed', [`s/x/y/;s/a/b/w ${M}`, 'file.txt']],
  // tar
  ['tar', ['-xf', 'a.tar', `--to-command=touch ${M}`]],
  ['tar', ['-xf', 'a.tar', `--to-c=touch ${M}`]],
  ['tar', ['-xf', 'a.tar', '--to-command', `touch ${M}`]],
  ['tar', ['xf', 'a.tar', `--to-command=touch ${M}`]],
  ['tar', ['-cf', 'o.tar', '--checkpoint=1', `--checkpoint-action=exec=touch ${M}`, 'file.txt']],
  ['tar', ['-cf', 'o.tar', '--checkpoint=1', `--checkpoint-act=exec=touch ${M}`, 'file.txt']],
  ['tar', ['-I', `touch ${M}`, '-cf', 'o.tar', 'file.txt']],
  ['tar', [`-Itouch ${M}`, '-cf', 'o.tar', 'file.txt']],
  ['tar', ['-cIf', `touch ${M}`, 'o.tar', 'file.txt']],
  ['tar', ['cIf', `touch ${M}`, 'o.tar', 'file.txt']],
  ['tar', [`--use-compress-program=touch ${M}`, '-cf', 'o.tar', 'file.txt']],
  ['tar', [`--use-comp=touch ${M}`, '-cf', 'o.tar', 'file.txt']],
  ['tar', ['-cf', 'host:o.tar', `--rsh-command=/usr/bin/touch`, 'file.txt']],
  ['tar', ['-cf', 'localhost:o.tar', 'file.txt']],
  ['tar', ['-cf', 'o.tar', `--rmt-command=touch ${M}`, 'file.txt']],
  ['tar', ['-F', `touch ${M}`, '-cf', 'o.tar', 'file.txt']],
  ['tar', [`--info-script=touch ${M}`, '-cf', 'o.tar', 'file.txt']],
  ['tar', [`--new-volume-script=touch ${M}`, '-cf', 'o.tar', 'file.txt']],
  // ssh
  ['ssh', ['-o', `ProxyCommand=touch ${M}`, 'h']],
  ['ssh', [`-oProxyCommand=touch ${M}`, 'h']],
  ['ssh', ['-vo', `ProxyCommand=touch ${M}`, 'h']],
  ['ssh', ['-o', `LocalCommand=touch ${M}`, '-o', 'PermitLocalCommand=yes', 'h']],
  ['ssh', ['-o', `KnownHostsCommand=touch ${M}`, 'h']],
  ['ssh', ['-F', 'ssh_config', 'h']],
  ['ssh', ['-Fssh_config', 'h']],
  ['ssh', ['-J', 'a@b', 'h']],
  // make
  ['make', [`--eval=all:;touch ${M}`]],
  ['make', ['-E', `all:;touch ${M}`]],
  ['make', [`--ev=all:;touch ${M}`]],
  ['make', ['-f', 'evil.mk']],
  ['make', ['--file=evil.mk']],
  ['make', ['-C', 'tpl']],
  ['make', ['SHELL=/bin/sh', 'all']],
  ['make', ['MAKEFLAGS=-E x', 'all']],
  // interpreters, inline
  ['perl', ['-e', `system("touch ${M}")`]],
  ['perl', ['-we', `system("touch ${M}")`]],
  ['perl', ['-E', `system("touch ${M}")`]],
  ['perl', ['-Mstrict', 'x.js']],
  ['python3', ['-c', `import os; os.system("touch ${M}")`]],
  ['python3', ['-Ic', `import os; os.system("touch ${M}")`]],
  ['python3', ['-m', 'http.server']],
  ['node', ['-e', `require("fs").writeFileSync("${M}", "")`]],
  ['node', [`--eval=require("fs").writeFileSync("${M}", "")`]],
  ['node', [`--ev=require("fs").writeFileSync("${M}", "")`]],
  ['node', ['-p', `require("fs").writeFileSync("${M}", "")`]],
  ['node', ['--require', './x.js', 'file.txt']],
  ['node', ['-r', './x.js', 'file.txt']],
  ['node', ['--import=./x.js', 'file.txt']],
  // pagers and editors
  ['less', [`+!touch ${M}`, 'file.txt']],
  ['less', ['-P', 'x', 'file.txt']],
  ['man', ['-P', `touch ${M}`, 'ls']],
  ['man', [`--pager=touch ${M}`, 'ls']],
  ['man', ['-H', `touch ${M}`, 'ls']],
  ['vim', ['-c', `!touch ${M}`, '-c', 'q']],
  ['vim', ['-es', '+q']],
  // the rest of the family
  ['sort', [`--compress-program=touch ${M}`, 'file.txt']],
  ['sort', [`--compress-p=touch ${M}`, 'file.txt']],
  ['split', [`--filter=touch ${M}`, 'file.txt']],
  ['split', [`--fil=touch ${M}`, 'file.txt']],
  ['zip', ['-T', '-TT', `touch ${M}`, 'a.zip', 'file.txt']],
  ['zip', ['-T', `--unzip-command=touch ${M}`, 'a.zip', 'file.txt']],
  ['rg', ['--pre', `touch`, 'alpha']],
  ['rg', ['--pre=touch', 'alpha']],
  ['wget', [`--use-askpass=touch ${M}`, 'http://127.0.0.1:1/']],
  ['wget', ['-e', `use_askpass=touch ${M}`, 'http://127.0.0.1:1/']],
  ['patch', ['-e', 'file.txt']],
  ['patch', ['--ed', 'file.txt']],
];

// Allowed to run, and harmless: the repository's hooks and config, ssh's own config.
const HARMLESS: [string, string, string[], () => void][] = [
  ['a commit hook in the repository does not run (hooks are off)', 'git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'x'], () => {
    writeFileSync(join(work, '.git', 'hooks', 'pre-commit'), `#!/bin/sh\ntouch ${marker}\n`);
    chmodSync(join(work, '.git', 'hooks', 'pre-commit'), 0o755);
  }],
  ['a clone does not run the post-checkout hook of a template in the repository config', 'git', ['clone', '-q', 'src', 'cloned'], () => {
    execFileSync('git', ['config', 'init.templateDir', join(work, 'tpl')], { cwd: work });
  }],
];

// Each refused because of the repository's own config, which a write tool could have written.
const REPOSITORY_CONFIG: [string, string[], string][] = [
  ['alias.st', ['st'], `[alias]\n\tst = !touch ${M}\n`],
  ['core.fsmonitor', ['status'], `[core]\n\tfsmonitor = touch ${M}\n`],
  ['core.pager', ['-p', 'log'], `[core]\n\tpager = touch ${M}\n`],
  ['an include of another file', ['status'], '[include]\n\tpath = ../evil.cfg\n'],
  ['a filter driver', ['status'], `[filter "x"]\n\tclean = touch ${M}\n`],
  ['a diff textconv', ['diff'], `[diff "x"]\n\ttextconv = touch ${M}\n`],
  ['core.sshCommand', ['status'], `[core]\n\tsshCommand = touch ${M}\n`],
  ['a url rewrite to ext::', ['ls-remote', 'https://x/y'], `[url "ext::touch ${M} #"]\n\tinsteadOf = https://\n`],
  ['an archive format\'s compressor', ['archive', '--format=tar.xz', 'HEAD'], `[tar "tar.xz"]\n\tcommand = touch ${M}\n`],
  ['a diff filter of add -p', ['add', '-p'], `[interactive]\n\tdiffFilter = touch ${M}\n`],
  ['a config-defined hook', ['commit', '--allow-empty', '-m', 'x'], `[hook "x"]\n\tcommand = touch ${M}\n\tevent = pre-commit\n`],
];

const BENIGN: [string, string[]][] = [
  ['git', ['status', '--short']],
  ['git', ['log', '--oneline']],
  ['git', ['-c', 'color.ui=never', 'log', '-1']],
  ['git', ['--no-pager', 'show', '--stat', 'HEAD']],
  ['git', ['rev-parse', 'HEAD:']],
  ['git', ['add', '-u']],
  ['git', ['clone', '-q', 'src', 'benign-clone']],
  ['git', ['-C', 'src', 'log', '-1']],
  ['find', ['.', '-name', '*.txt', '-maxdepth', '1']],
  ['find', ['.', '-type', 'f', '-newer', 'file.txt', '-print']],
  ['env', ['LANG=C', 'git', 'status', '--short']],
  ['env', ['cat', 'file.txt']],
  ['awk', ['{print $1}', 'file.txt']],
  ['awk', ['-F', ' ', 'NR > 1 { print $2 }', 'file.txt']],
  ['awk', ['{ print ($1 > "b") }', 'file.txt']],
  ['awk', ['BEGIN { if (1 > 0) print "yes" }']],
  ['sed', ['s/alpha/ALPHA/g', 'file.txt']],
  ['sed', ['-n', '/beta/p', 'file.txt']],
  ['sed', ['-e', 's/e/E/g', '-e', '1d', 'file.txt']],
  ['sed', ['-E', 's/(a)(l)/\\2\\1/;$a tail text with e and w', 'file.txt']],
  ['tar', ['-tf', 'a.tar']],
  ['tar', ['-cf', 'b.tar', 'file.txt']],
  ['tar', ['czf', 'b.tgz', 'file.txt']],
  ['ssh', ['-V']],
  ['make', ['-v']],
  ['perl', ['-v']],
  ['python3', ['-V']],
  ['node', ['x.js']],
  ['less', ['file.txt']],
  ['sort', ['-r', 'file.txt']],
  ['split', ['-l', '1', 'file.txt', 'part-']],
  ['zip', ['-q', 'b.zip', 'file.txt']],
  ['rg', ['alpha', 'file.txt']],
  ['patch', ['--version']],
  ['timeout', ['5', 'cat', 'file.txt']],
  ['nice', ['-n', '5', 'git', 'log', '-1']],
  ['nohup', ['cat', 'file.txt']],
  ['stdbuf', ['-o0', 'sed', 's/a/b/', 'file.txt']],
  ['time', ['-o', 'time.txt', 'cat', 'file.txt']],
];

describe('the launcher corpus, run with the real programs', () => {
  it.each(ATTACKS)('%s %j is refused and runs nothing', async (binary, args, stdin) => {
    tried.refused++;
    const result = await t.call('cli_execute', { binary, args: sub(args), ...(stdin ? { stdin: stdin.replaceAll(M, marker) } : {}) });
    expect(result.ok, JSON.stringify(result)).toBe(false);
    if (!result.ok) expect(['FORGE_CLI_LAUNCHER', 'FORGE_CLI_SHELL', 'FORGE_CLI_NOT_ALLOWED']).toContain(result.error.code);
    expect(existsSync(marker)).toBe(false);
  });

  it.each(HARMLESS)('%s', async (_what, binary, args, arrange) => {
    tried.harmless++;
    arrange();
    const result = await t.call('cli_execute', { binary, args: sub(args) });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it.each(REPOSITORY_CONFIG)('git refuses to run while the repository config sets %s', async (what, args, config) => {
    tried.refused++;
    const configPath = join(work, 'src', '.git', 'config');
    const { readFileSync } = await import('node:fs');
    const before = readFileSync(configPath, 'utf8');
    writeFileSync(configPath, before + config.replaceAll(M, marker));
    try {
      const result = await t.call('cli_execute', { binary: 'git', args: ['-C', 'src', ...sub(args)] });
      expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_LAUNCHER', message: expect.stringContaining("repository's configuration") } });
      expect(existsSync(marker)).toBe(false);
    } finally {
      writeFileSync(configPath, before);
    }
    expect(what).toBeTruthy();
  });

  it.each(BENIGN)('%s %j still runs', async (binary, args) => {
    tried.benign++;
    const result = await t.call('cli_execute', { binary, args });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (result.ok) expect((result.value as { exit_code: number }).exit_code, JSON.stringify(result.value)).toBe(0);
  });

  it('runs git with system and global config off and only safe transports', async () => {
    const result = await t.call('cli_execute', { binary: 'env', args: [] });
    expect(result.ok).toBe(true);
    const gitEnv = await t.call('cli_execute', { binary: 'git', args: ['var', '-l'] });
    expect(gitEnv.ok).toBe(true);
    const listed = await t.call('cli_execute', { binary: 'git', args: ['config', '--list', '--show-scope'] });
    expect(JSON.stringify(listed)).not.toMatch(/\b(system|global)\b/);
    const ssh = await t.call('cli_execute', { binary: 'git', args: ['ls-remote', 'localhost:x'] });
    expect(ssh.ok && (ssh.value as { stderr: string }).stderr).toMatch(/transport 'ssh' not allowed/);
  });
});

describe('the policy, for programs not installed here (checked without running)', () => {
  const allowlist = resolveAllowlist([], PATH);
  const fake = (name: string): ResolvedBinary => ({ name, path: `/usr/bin/${name}`, real: `/usr/bin/${name}` });
  const context = () => ({ allowlist, workDir: work, home: join(base, 'home'), env: { PATH } });

  it.each([
    ['rsync', ['-e', 'touch M', 'a', 'b']],
    ['rsync', ['--rsh=touch M', 'a', 'b']],
    ['rsync', ['--rs=touch M', 'a', 'b']],
    ['rsync', ['-avze', 'touch M', 'a', 'b']],
    ['rsync', ['--rsync-path=touch M', 'a', 'h:b']],
    ['rsync', ['-a', 'a', 'host:b']],
    ['rsync', ['-M', '--rsh=x', 'a', 'b']],
    ['rsync', ['--remote-option=--rsh=x', 'a', 'b']],
    ['scp', ['-S', 'touch', 'a', 'h:b']],
    ['scp', ['-o', 'ProxyCommand=touch M', 'a', 'h:b']],
    ['sftp', ['-D', 'touch', 'h']],
    ['gawk', ['-l', 'filefuncs', 'BEGIN{}']],
    ['gawk', ['-i', 'inc.awk', 'BEGIN{}']],
    ['gawk', ['BEGIN{print |& "touch M"}']],
    ['sudo', ['ls']],
    ['xargs', ['-0']],
    ['busybox', ['sh']],
    ['ruby', ['-e', 'system("x")']],
    ['fd', ['-x', 'touch']],
    ['fd', ['--exec-batch', 'touch']],
    ['emacs', ['--batch']],
    ['flock', ['x', '-c', 'touch M']],
    ['strace', ['touch', 'M']],
    ['ionice', ['-c', '3', 'touch', 'M']],
  ] as const)('%s %j is refused', async (name, args) => {
    tried.policyOnly++;
    const verdict = await checkLaunch(fake(name), [...args], context());
    expect('code' in verdict && verdict.code, JSON.stringify(verdict)).toBeTruthy();
  });

  it.each([
    ['rsync', ['-av', 'a/', 'b/']],
    ['rsync', ['rsync://mirror/x', 'b/']],
    ['scp', ['-P', '2222', 'a', 'b']],
  ] as const)('%s %j passes', async (name, args) => {
    tried.policyOnly++;
    const verdict = await checkLaunch(fake(name), [...args], context());
    expect('code' in verdict, JSON.stringify(verdict)).toBe(false);
  });

  it('covers every program of the policy in this corpus', () => {
    const named = new Set([...ATTACKS.map(([p]) => p), 'rsync', 'scp', 'sftp', 'gawk', 'sudo', 'busybox', 'ruby', 'fd', 'emacs', 'flock', 'strace', 'ionice']);
    const rows = LAUNCHER_POLICY.filter((row) => !row.programs.some((p) => named.has(p)));
    expect(rows.map((row) => row.programs.join('/'))).toEqual([]);
  });
});
