/**
 * Applies the launcher policy (launcher-policy.ts) to one command: refuses
 * the uses of a program that would run another program, follows wrappers
 * (env, timeout, nice ...) to the command they run and checks that one as if
 * it had been given directly (it must be on the allowlist, and is run by its
 * resolved path), and says which arguments and environment the program runs
 * with (git with system/global config off and safe transports only).
 */
import { basename } from 'node:path';
import { runCommand } from '../exec/run-command.ts';
import { checkArguments, checkBinary, type Allowlist, type CommandRefusal, type ResolvedBinary } from './command-guard.ts';
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

/** Checks `args` for `binary` against its row of the policy; the plan it runs with, or why not. */
export async function checkLaunch(binary: ResolvedBinary, args: readonly string[], context: LaunchContext, depth = 0): Promise<LaunchPlan | CommandRefusal> {
  const policy = policyFor(binary.name, basename(binary.path), basename(binary.real));
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

function scriptProblem(language: 'awk' | 'sed', args: readonly string[]): { index: number; why: string } | undefined {
  const scan = language === 'awk' ? awkProblem : sedProblem;
  const scripts: number[] = [];
  let explicit = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') {
      if (!explicit && i + 1 < args.length) scripts.push(i + 1);
      break;
    }
    // sed -e SCRIPT / --expression[=]SCRIPT; gawk -e TEXT / --source[=]TEXT (any abbreviation).
    const inlineName = language === 'sed' ? 'expression' : 'source';
    const long = /^--([a-z-]+)(=([\s\S]*))?$/.exec(arg);
    if (long && inlineName.startsWith(long[1])) {
      explicit = true;
      if (long[2] !== undefined) {
        const problem = scan(long[3]);
        if (problem) return { index: i, why: `the program ${problem}` };
      } else {
        scripts.push(i + 1);
        i++;
      }
      continue;
    }
    if (arg === '-e') {
      explicit = true;
      scripts.push(i + 1);
      i++;
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      // A short cluster ending in e (sed -ne 'script'), or awk's -v/-F taking the next argument.
      if (language === 'sed' && /^-[a-zA-Z]*e$/.test(arg)) {
        explicit = true;
        scripts.push(i + 1);
        i++;
      } else if (language === 'sed' && /^-[nrEsuz]*e./.test(arg)) {
        explicit = true;
        const problem = scan(arg.slice(arg.indexOf('e') + 1));
        if (problem) return { index: i, why: `the program ${problem}` };
      } else if (language === 'awk' && (arg === '-v' || arg === '-F')) {
        i++;
      } else if (language === 'sed' && arg === '-l') {
        i++;
      }
      continue;
    }
    if (!explicit && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(arg)) {
      scripts.push(i);
      break;
    }
  }
  for (const index of scripts) {
    if (index >= args.length) continue;
    const problem = scan(args[index]);
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

/**
 * git reads the repository's config on every run, and any write tool can
 * write .git/config: a key there naming a program (an alias, a driver, a
 * helper ...) would run it. The config git would read is listed first
 * (with the same -C/--git-dir options, and the same safe environment).
 */
async function gitRepositoryProblem(binary: ResolvedBinary, globals: readonly string[], context: LaunchContext, env: Record<string, string>): Promise<CommandRefusal | undefined> {
  const location: string[] = [];
  for (let i = 0; i < globals.length; i++) {
    if (['-C', '--git-dir', '--work-tree'].includes(globals[i])) location.push(globals[i], globals[++i] ?? '');
    else if (/^--(git-dir|work-tree)=/.test(globals[i])) location.push(globals[i]);
  }
  const listed = await runCommand({
    command: binary.path,
    args: [...location, 'config', '--list', '--includes', '--show-scope', '-z'],
    cwd: context.workDir,
    env: { ...context.env, ...env },
    timeoutMs: 10_000,
    maxOutputBytes: 4 * 1024 * 1024,
  });
  if (listed.spawnError || listed.timedOut) return refusal(binary, undefined, undefined, 'the repository configuration could not be read, so it cannot be checked');
  const fields = listed.stdout.split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const scope = fields[i];
    const key = fields[i + 1].split('\n')[0].toLowerCase();
    if (scope === 'command') continue; // Forge's own settings (hooks off, no pager ...).
    if (GIT_PROGRAM_KEYS.test(key)) {
      return refusal(binary, undefined, undefined, `the repository's configuration sets ${key}, which can make git run a program; remove it from .git/config before running git through cli_execute`);
    }
  }
  return undefined;
}
