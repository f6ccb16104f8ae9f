/**
 * Applies the launcher policy (launcher-policy.ts) to one command: refuses
 * the uses of a program that would run another program, follows wrappers
 * (env, timeout, nice ...) to the command they run and checks that one as if
 * it had been given directly (it must be on the allowlist, and is run by its
 * resolved path), and says which arguments and environment the program runs
 * with (git with system/global config off and safe transports only).
 */
import { realpathSync } from 'node:fs';
import { basename, isAbsolute, relative, sep } from 'node:path';
import { runCommand, type CommandResult } from '../exec/run-command.ts';
import { checkArguments, checkBinary, type Allowlist, type CommandRefusal, type ResolvedBinary } from './command-guard.ts';
import { gitDirsInside, MAX_WALKED_DIRECTORIES, repositoriesUnder } from './git-repositories.ts';
import { isWithin } from './path-guard.ts';
import { GIT_PROGRAM_KEYS, GIT_SAFE_CONFIG_KEYS, policyFor, type OptionRule, type ProgramPolicy } from './launcher-policy.ts';
import { awkProblem, sedProblem } from './script-scan.ts';

export interface LaunchContext {
  allowlist: Allowlist;
  workDir: string;
  home: string;
  /** The environment the program would get (env_passthrough applied), for git's repository check. */
  env: Record<string, string>;
}

export interface LaunchPlan {
  args: string[];
  /** Set on top of the program's environment. */
  env: Record<string, string>;
  /** The policy rows that applied (the program's, then a wrapped command's). */
  policies: ProgramPolicy[];
}

const MAX_WRAPPING = 4;
const SAFE_ASSIGNMENT = /^(LANG|LC_[A-Z_]+|TZ|NO_COLOR|COLUMNS|LINES|TERM)=/;
const GIT_GLOBAL_VALUE_OPTIONS = ['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--config-env', '--exec-path', '--list-cmds'];

function refusal(binary: ResolvedBinary, index: number | undefined, arg: string | undefined, why: string): CommandRefusal {
  const where = index === undefined ? '' : `argument ${index + 1} (${JSON.stringify(arg!.length > 80 ? `${arg!.slice(0, 80)}…` : arg)}) `;
  return {
    code: 'FORGE_CLI_LAUNCHER',
    message: `${where}refused for ${binary.name}: ${why}`,
    hint: `${binary.name} can run other programs this way, which would bypass the allowlist; see \`forge tool describe cli_execute\` for what each program may not do`,
  };
}

/** Whether `arg` spells one of the rule's options (abbreviated, "="-joined, clustered or with an attached value). */
export function matchesOption(arg: string, rule: OptionRule): boolean {
  if (rule.exact?.some((e) => arg === e || arg.startsWith(`${e}=`))) return true;
  if (arg.startsWith('--') && arg.length > 2) {
    const name = arg.slice(2).split('=')[0];
    return (rule.long ?? []).some((long) => long.startsWith(name));
  }
  if (arg.startsWith('-') && arg.length > 1 && !arg.startsWith('--')) {
    const cluster = arg.slice(1);
    return (rule.short ?? []).some((letter) => cluster.includes(letter));
  }
  return false;
}

function optionProblem(args: readonly string[], rules: readonly OptionRule[], stopAtOperand: boolean, offset = 0): { index: number; why: string } | undefined {
  for (const [i, arg] of args.entries()) {
    if (arg === '--') return undefined;
    if (stopAtOperand && !arg.startsWith('-')) return undefined;
    for (const rule of rules) if (matchesOption(arg, rule)) return { index: i + offset, why: rule.why };
  }
  return undefined;
}

/** The policy row of a resolved program, by any of its names (as asked, on PATH, the file it really is). */
export function policyOfBinary(binary: ResolvedBinary): ProgramPolicy | undefined {
  return policyFor(binary.name, basename(binary.path), basename(binary.real));
}

/** Checks `args` for `binary` against its row of the policy; the plan it runs with, or why not. */
export async function checkLaunch(binary: ResolvedBinary, args: readonly string[], context: LaunchContext, depth = 0): Promise<LaunchPlan | CommandRefusal> {
  const policy = policyOfBinary(binary);
  if (!policy) return { args: [...args], env: {}, policies: [] };
  if (policy.refused) return refusal(binary, undefined, undefined, `${policy.runs}; it is never run`);

  const bundled = policy.bundledFirstArg && args[0] && !args[0].startsWith('-') ? [`-${args[0]}`, ...args.slice(1)] : args;
  const isGit = policy.programs.includes('git');
  const globals = isGit ? gitGlobalCount(args) : bundled.length;
  const optionFailure = optionProblem(bundled.slice(0, globals), policy.options ?? [], policy.optionsEndAtOperand ?? false);
  if (optionFailure) return refusal(binary, optionFailure.index, args[optionFailure.index], optionFailure.why);

  for (const [i, arg] of args.entries()) {
    for (const operand of policy.operands ?? []) {
      if (new RegExp(operand.pattern, 'i').test(arg)) return refusal(binary, i, arg, operand.why);
    }
  }

  if (isGit) {
    const problem = gitProblem(args, globals, policy);
    if (problem) return refusal(binary, problem.index, args[problem.index], problem.why);
  }
  if (policy.script) {
    const problem = scriptProblem(policy.script, args);
    if (problem) return refusal(binary, problem.index, args[problem.index], problem.why);
  }

  const plan: LaunchPlan = { args: [...(policy.prependArgs ?? []), ...args], env: { ...(policy.env ?? {}) }, policies: [policy] };
  if (policy.wrapper) {
    const wrapped = await checkWrapped(binary, policy, args, context, depth);
    if ('code' in wrapped) return wrapped;
    plan.args = [...(policy.prependArgs ?? []), ...wrapped.args];
    Object.assign(plan.env, wrapped.env);
    plan.policies.push(...wrapped.policies);
  }
  if (isGit) {
    const config = await gitRepositoryProblem(binary, args.slice(0, globals), context, plan.env);
    if (config) return config;
  }
  return plan;
}

/** How many arguments are git's own options, before the subcommand. */
function gitGlobalCount(args: readonly string[]): number {
  let i = 0;
  while (i < args.length && args[i].startsWith('-')) {
    if (args[i] === '--') return i + 1;
    if (GIT_GLOBAL_VALUE_OPTIONS.includes(args[i])) i++;
    i++;
  }
  return i;
}

function gitProblem(args: readonly string[], globals: number, policy: ProgramPolicy): { index: number; why: string } | undefined {
  for (let i = 0; i < globals; i++) {
    const value = args[i] === '-c' ? args[i + 1] : args[i].startsWith('-c') && args[i].length > 2 ? args[i].slice(2) : undefined;
    if (value === undefined) continue;
    const key = value.split('=')[0];
    if (!GIT_SAFE_CONFIG_KEYS.test(key)) return { index: args[i] === '-c' ? i + 1 : i, why: `-c ${key} is not a presentation setting; only those may be set (a config key can name a program git runs)` };
  }
  const subcommand = args[globals];
  if (subcommand === undefined) return undefined;
  const rules = policy.subcommands?.[subcommand];
  if (rules === 'refused') return { index: globals, why: `git ${subcommand} runs other programs (tools, scripts, helpers or a server); it is never run` };
  if (subcommand === 'bisect' || (subcommand === 'submodule' && args.slice(globals + 1).includes('foreach'))) return { index: globals, why: 'runs a command for each step' };
  if (rules) {
    const found = optionProblem(args.slice(globals + 1), rules, false, globals + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * How getopt reads a script program's arguments, from the option strings of
 * gawk ("+F:f:v:W;bcCd::D::e:E:ghi:Il:L::nNo::Op::MPrSstVYZ:", a superset of
 * mawk's -F/-f/-v/-W) and GNU sed ("bsnrzuEe:f:l:i::V:"). Reading them any
 * other way lets an option take the program as its value (-bF : PROG) or
 * hide one (-e{...}), and the scan would look at the wrong argument.
 */
interface ScriptSyntax {
  /** Short options that take a value: the rest of the cluster, else the next argument. */
  valued: string;
  /** Short options whose value is optional: only the rest of the cluster. */
  optional: string;
  /** Long options that take the next argument unless "="-joined. */
  valuedLong: string[];
  /** The options whose value is program text (gawk -e/--source, sed -e/--expression). */
  inline: { short: string; long: string };
  /** GNU sed permutes: options count after operands too. gawk ("+") and mawk stop at the first operand. */
  permutes: boolean;
}

const SCRIPT_SYNTAX: Record<'awk' | 'sed', ScriptSyntax> = {
  awk: { valued: 'FfvWeEilZ', optional: 'dDLop', valuedLong: ['assign', 'field-separator', 'source', 'file', 'exec', 'include', 'load'], inline: { short: 'e', long: 'source' }, permutes: false },
  sed: { valued: 'eflV', optional: 'i', valuedLong: ['expression', 'file', 'line-length'], inline: { short: 'e', long: 'expression' }, permutes: true },
};

interface ProgramText {
  index: number;
  text: string;
}

/** The program texts the program would run: every inline one (-e, --source=...), else the first operand. */
function programTexts(syntax: ScriptSyntax, args: readonly string[]): ProgramText[] {
  const inline: ProgramText[] = [];
  const operands: number[] = [];
  let optionsEnded = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!optionsEnded && arg === '--') optionsEnded = true;
    else if (optionsEnded || arg === '-' || !arg.startsWith('-')) {
      operands.push(i);
      if (!syntax.permutes) optionsEnded = true;
    } else if (arg.startsWith('--')) i = readLongOption(syntax, args, i, inline);
    else i = readShortCluster(syntax, args, i, inline);
  }
  if (inline.length > 0) return inline;
  return operands.length > 0 ? [{ index: operands[0], text: args[operands[0]] }] : [];
}

/** Reads one --name[=value] (any unambiguous abbreviation); the index of the last argument it used. */
function readLongOption(syntax: ScriptSyntax, args: readonly string[], i: number, inline: ProgramText[]): number {
  const [name, ...rest] = args[i].slice(2).split('=');
  const joined = rest.length > 0 ? rest.join('=') : undefined;
  const takesNext = joined === undefined && syntax.valuedLong.some((long) => long.startsWith(name));
  if (syntax.inline.long.startsWith(name)) {
    if (joined !== undefined) inline.push({ index: i, text: joined });
    else if (i + 1 < args.length) inline.push({ index: i + 1, text: args[i + 1] });
  }
  return takesNext ? i + 1 : i;
}

/** Reads one cluster of short options (-bF:, -ne, -e{...}); the index of the last argument it used. */
function readShortCluster(syntax: ScriptSyntax, args: readonly string[], i: number, inline: ProgramText[]): number {
  const arg = args[i];
  for (let j = 1; j < arg.length; j++) {
    const letter = arg[j];
    if (syntax.optional.includes(letter)) return i;
    if (!syntax.valued.includes(letter)) continue;
    const attached = arg.slice(j + 1);
    const value = attached ? { index: i, text: attached } : i + 1 < args.length ? { index: i + 1, text: args[i + 1] } : undefined;
    if (letter === syntax.inline.short && value) inline.push(value);
    return attached ? i : i + 1;
  }
  return i;
}

function scriptProblem(language: 'awk' | 'sed', args: readonly string[]): { index: number; why: string } | undefined {
  const scan = language === 'awk' ? awkProblem : sedProblem;
  for (const { index, text } of programTexts(SCRIPT_SYNTAX[language], args)) {
    const problem = scan(text);
    if (problem) return { index, why: `the program ${problem}` };
  }
  return undefined;
}

async function checkWrapped(binary: ResolvedBinary, policy: ProgramPolicy, args: readonly string[], context: LaunchContext, depth: number): Promise<{ args: string[]; env: Record<string, string>; policies: ProgramPolicy[] } | CommandRefusal> {
  const wrapper = policy.wrapper!;
  let leading = wrapper.leading ?? 0;
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') {
      i++;
      break;
    }
    if (arg.startsWith('-') && arg.length > 1 && leading === (wrapper.leading ?? 0)) {
      if (wrapper.valueOptions.includes(arg)) i++;
      continue;
    }
    if (wrapper.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(arg)) {
      if (!SAFE_ASSIGNMENT.test(arg)) return refusal(binary, i, arg, `sets ${arg.split('=')[0]} for the command it runs; only LANG, LC_*, TZ, NO_COLOR, COLUMNS, LINES and TERM may be set this way`);
      continue;
    }
    if (leading > 0) {
      leading--;
      continue;
    }
    break;
  }
  if (i >= args.length) return { args: [...args], env: {}, policies: [] };
  if (depth >= MAX_WRAPPING) return refusal(binary, i, args[i], 'wraps too many commands inside each other');
  const inner = checkBinary(context.allowlist, args[i], context.workDir);
  if ('code' in inner) {
    if (inner.code === 'FORGE_CLI_SHELL') return { ...inner, message: `argument ${i + 1} would make ${binary.name} run a shell: ${inner.message}` };
    return { ...inner, message: `${binary.name} would run "${args[i]}": ${inner.message}`, hint: `a command run through ${binary.name} must itself be on the allowlist` };
  }
  const innerArgs = args.slice(i + 1);
  const argumentRefusal = checkArguments(innerArgs, { workDir: context.workDir, home: context.home, binary: inner });
  if (argumentRefusal) return argumentRefusal;
  const innerPlan = await checkLaunch(inner, innerArgs, context, depth + 1);
  if ('code' in innerPlan) return innerPlan;
  // The wrapped command runs by the path the allowlist resolved, so the wrapper's own PATH lookup cannot pick another one.
  return { args: [...args.slice(0, i), inner.path, ...innerPlan.args], env: innerPlan.env, policies: innerPlan.policies };
}

/** Variables that tie git to one repository; git drops them when it starts a child git in a submodule. */
const GIT_REPOSITORY_ENV = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_COMMON_DIR', 'GIT_IMPLICIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_PREFIX'];

const UNREADABLE = 'where the repository and its git dir are could not be read, so what git would run there cannot be checked';

type GitRun = (args: readonly string[], options?: { nested?: boolean }) => Promise<CommandResult>;

interface Repository {
  gitDir: string;
  /** Absent for a bare repository. */
  workTree?: string;
}

/**
 * git reads the repository's config on every run, and any write tool can
 * write .git/config: a key there naming a program (an alias, a driver, a
 * helper ...) would run it. The config git would read is listed first
 * (with the same -C/--git-dir options, and the same safe environment).
 * git also starts child gits in nested repositories (submodules, embedded
 * repositories: `git status` in a superproject, `--submodule=diff`,
 * `--recurse-submodules`), each reading its own config: every repository
 * git could enter from there passes the same check.
 */
async function gitRepositoryProblem(binary: ResolvedBinary, globals: readonly string[], context: LaunchContext, env: Record<string, string>): Promise<CommandRefusal | undefined> {
  const git: GitRun = (args, options) => runCommand({
    command: binary.path,
    args,
    cwd: context.workDir,
    env: gitCheckEnv({ ...context.env, ...env }, options?.nested ?? false),
    timeoutMs: 10_000,
    maxOutputBytes: 4 * 1024 * 1024,
  });
  const location = gitLocation(globals);
  const own = await configProblem(git, location, false);
  if (own) return refusal(binary, undefined, undefined, own);
  const top = await locateRepository(git, location, false);
  if (top === 'unreadable') return refusal(binary, undefined, undefined, UNREADABLE);
  if (!top) return undefined;
  const workDir = realOrSelf(context.workDir);
  const changeable = changeableGitDir(top.gitDir, workDir);
  if (changeable) return refusal(binary, undefined, undefined, changeable);
  const nested = await nestedRepositoryProblem(git, top, workDir);
  return nested ? refusal(binary, undefined, undefined, nested) : undefined;
}

/** git's own options that choose the repository (-C, --git-dir, --work-tree), as given. */
function gitLocation(globals: readonly string[]): string[] {
  const location: string[] = [];
  for (let i = 0; i < globals.length; i++) {
    if (['-C', '--git-dir', '--work-tree'].includes(globals[i])) location.push(globals[i], globals[++i] ?? '');
    else if (/^--(git-dir|work-tree)=/.test(globals[i])) location.push(globals[i]);
  }
  return location;
}

/** The environment of a check: git's own (the caller's config file is not one git reads), and for a nested repository none that pins the parent's. */
function gitCheckEnv(env: Record<string, string>, nested: boolean): Record<string, string> {
  const out = { ...env };
  delete out.GIT_CONFIG; // only `git config` reads it: listing with it set would show another file than git runs with
  if (nested) for (const name of GIT_REPOSITORY_ENV) delete out[name];
  return out;
}

/** Why the config git reads at `location` is refused, if it is. */
async function configProblem(git: GitRun, location: readonly string[], nested: boolean, shown?: string): Promise<string | undefined> {
  const listed = await git([...location, 'config', '--list', '--includes', '--show-scope', '-z'], { nested });
  const whose = shown === undefined ? "the repository's configuration" : `the nested repository's configuration (${shown})`;
  if (listed.spawnError || listed.timedOut) return `${whose} could not be read, so it cannot be checked`;
  const fields = listed.stdout.split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const scope = fields[i];
    const key = fields[i + 1].split('\n')[0].toLowerCase();
    if (scope === 'command') continue; // Forge's own settings (hooks off, no pager ...).
    if (GIT_PROGRAM_KEYS.test(key)) {
      const where = shown === undefined ? '.git/config' : 'that repository\'s config';
      const why = shown === undefined ? '' : ' (git runs a git of its own in a nested repository or submodule, with that config)';
      return `${whose} sets ${key}, which can make git run a program${why}; remove it from ${where} before running git through cli_execute`;
    }
  }
  return undefined;
}

/** The git dir and work tree git would use at `location`; undefined outside any repository, 'unreadable' when git's answer cannot be trusted. */
async function locateRepository(git: GitRun, location: readonly string[], nested: boolean): Promise<Repository | undefined | 'unreadable'> {
  const found = await git([...location, 'rev-parse', '--absolute-git-dir', '--show-toplevel'], { nested });
  if (found.spawnError || found.timedOut) return 'unreadable';
  if (found.stdout === '') return undefined;
  // One path a line: a work tree, or a bare repository's git dir alone (git then fails on --show-toplevel).
  // A path with a line break in it would be misread, so it is not read at all.
  const lines = found.stdout.split('\n');
  const expected = found.exitCode === 0 ? 3 : 2;
  if (lines.length !== expected || lines.slice(0, -1).some((line) => !isAbsolute(line))) return 'unreadable';
  return { gitDir: realOrSelf(lines[0]), workTree: expected === 3 ? realOrSelf(lines[1]) : undefined };
}

/**
 * Every repository git could enter from `top`: those with a .git entry in a
 * work tree walked (the top one's, or the work dir when that tree holds the
 * work dir: outside it are the user's own files), and the git dirs kept
 * under each git dir's modules/ and worktrees/; each found one's own work
 * tree is walked in turn, until nothing new turns up.
 */
async function nestedRepositoryProblem(git: GitRun, top: Repository, workDir: string): Promise<string | undefined> {
  const budget = { directories: 0 };
  const walkProblem = (walk: { tooMany: true } | { unreadable: string }) =>
    'tooMany' in walk
      ? `the work tree has more than ${MAX_WALKED_DIRECTORIES} directories to search for nested repositories, whose config git may read; they cannot all be checked`
      : `${shownPath(workDir, walk.unreadable)} cannot be read, so a nested repository in it (whose config git may read) cannot be checked; make it readable, or remove it`;
  const seen = new Set([top.gitDir]);
  const walked: string[] = [];
  const queue: { location: string[]; shown: string }[] = [];
  const explore = async (repository: Repository, isTop: boolean): Promise<string | undefined> => {
    const tree = repository.workTree;
    if (tree && !walked.some((root) => isWithin(root, tree))) {
      const holdsWorkDir = isWithin(tree, workDir);
      if (holdsWorkDir && !isTop) return `a nested repository's work tree (${tree}) contains the working directory, so what git would enter from it cannot be checked`;
      const root = holdsWorkDir ? workDir : tree;
      const walk = await repositoriesUnder(root, budget);
      if (!('found' in walk)) return walkProblem(walk);
      walked.push(root);
      for (const dir of walk.found) if (dir !== tree) queue.push({ location: ['-C', dir], shown: shownPath(workDir, dir) });
    }
    const gitDirs = await gitDirsInside(repository.gitDir, budget);
    if (!('found' in gitDirs)) return walkProblem(gitDirs);
    for (const dir of gitDirs.found) queue.push({ location: [`--git-dir=${dir}`], shown: shownPath(workDir, dir) });
    return undefined;
  };
  const topProblem = await explore(top, true);
  if (topProblem) return topProblem;
  while (queue.length) {
    const { location, shown } = queue.shift()!;
    const repository = await locateRepository(git, location, true);
    if (repository === 'unreadable') return `${UNREADABLE} (${shown})`;
    if (!repository || seen.has(repository.gitDir)) continue; // not a repository git can open, or one checked already
    seen.add(repository.gitDir);
    const problem = changeableGitDir(repository.gitDir, workDir, shown) ?? (await configProblem(git, location, true, shown)) ?? (await explore(repository, false));
    if (problem) return problem;
  }
  return undefined;
}

/**
 * Why git may not use `gitDir`, if a file tool could write its config: git reads the config again as it
 * starts, after the check, and a write in between would run what the check never saw. File tools never
 * write a `.git` (path-guard.ts), nor outside the work dir; a bare repository, a --separate-git-dir or
 * any other git dir inside the work dir under another name they could.
 */
function changeableGitDir(gitDir: string, workDir: string, shown?: string): string | undefined {
  if (!isWithin(workDir, gitDir) || relative(workDir, gitDir).split(sep).some((segment) => segment.toLowerCase() === '.git')) return undefined;
  const whose = shown === undefined ? 'the repository' : `the nested repository (${shown})`;
  return `${whose} keeps its files in ${shownPath(workDir, gitDir)}, not in a .git directory, so file tools could change its config between this check and git's own read; use a repository whose git dir is .git (git init without --bare or --separate-git-dir)`;
}

function shownPath(workDir: string, path: string): string {
  return isWithin(workDir, path) ? relative(workDir, path) || '.' : path;
}

function realOrSelf(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}
