import { homedir } from 'node:os';
import { RunTurns } from '../../exec/run-turns.ts';
import { commandOutput, outputTail, runCommand } from '../../exec/run-command.ts';
import { checkArguments, checkBinary, resolveAllowlist, SHELLS, type CommandRefusal, type ResolvedBinary } from '../../guard/command-guard.ts';
import { checkLaunch, policyOfBinary } from '../../guard/launcher-check.ts';
import { launcherPolicyText } from '../../guard/launcher-policy-text.ts';
import { PathGuard } from '../../guard/path-guard.ts';
import { toolEnvironment } from '../custom/tool-env.ts';
import { guarded, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';
import { formatDuration } from '../registry.ts';
import { defineBuiltin } from './define.ts';
import { processesBusy } from '../process-busy.ts';

export const MAX_TIMEOUT_SECONDS = 600;
const DEFAULT_TIMEOUT_SECONDS = 30;
/** The call's own limit is the program's plus this: time to stop the process tree and report its output. */
const STOP_GRACE_SECONDS = 10;

/** Whether this is git (by any name it is allowed under); a refusal is not. */
function isGit(binary: ResolvedBinary | CommandRefusal): boolean {
  return !('code' in binary) && policyOfBinary(binary)?.programs.includes('git') === true;
}

export default defineBuiltin({
  spec: {
    name: 'cli_execute',
    description: [
      'Run an allowed program with a list of arguments — never through a shell, so nothing is expanded, piped or redirected. Returns the exit code, stdout and stderr (each cut at config max_output_bytes, default 1 MiB, with a truncated flag) and the duration; a non-zero exit code is a normal result.',
      'Only binaries named in config allowed_binaries run (by name, or by their absolute path), resolved on PATH when the agent starts. Shell interpreters (' + SHELLS.slice(0, 10).join(', ') + ' ...) are always refused, also through a symlink or a launcher such as env, xargs or find -exec. Arguments containing $( or backticks, line breaks or file:// URLs are refused, and so are paths (also in --flag=value form, or glued to a short option as in -C/dir) that lead into the home directory outside the working directory, or name a directory that contains it (/, /home).',
      'Programs that can run other programs (git, find, xargs, env, awk, sed, tar, rsync, ssh, make, interpreters ...) have the uses that would do so refused (e.g. find -exec, git --upload-pack or -c core.*, sed\'s e command, tar --to-command); a command run through env, timeout or nice must itself be allowed. git runs without system or global config and only over file, git, http and https. `forge tool describe cli_execute` lists the policy.',
      'The program runs in the working directory with only PATH, LANG, HOME (= the working directory) and the variables config env_passthrough names; `stdin` is written to its input. It is stopped, with every process it started, after `timeout` seconds (default and upper limit: config timeout, 30 s unless set); the call as a whole ends at most 10 s later, once they are stopped.',
    ].join('\n'),
    category: 'builtin',
    tags: ['run'],
    timeoutMs: (DEFAULT_TIMEOUT_SECONDS + STOP_GRACE_SECONDS) * 1000,
    inputSchema: {
      type: 'object',
      required: ['binary'],
      additionalProperties: false,
      properties: {
        binary: { type: 'string', minLength: 1, description: 'An allowed program, e.g. "git", or its absolute path.' },
        args: { type: 'array', items: { type: 'string' }, maxItems: 1000, default: [], description: 'Arguments, one per item, e.g. ["log", "--oneline", "-5"].' },
        stdin: { type: 'string', description: 'Text written to the program\'s standard input.' },
        timeout: { type: 'number', exclusiveMinimum: 0, maximum: MAX_TIMEOUT_SECONDS, description: 'Seconds before the program is stopped (at most the configured timeout).' },
      },
    },
  },
  // What `forge tool describe` shows agrees with the description: the configured timeout plus the grace.
  specFor: (config) => ({ timeoutMs: ((config.timeout ?? DEFAULT_TIMEOUT_SECONDS) + STOP_GRACE_SECONDS) * 1000 }),
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      allowed_binaries: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true, default: [], description: 'Programs the agent may run, by name (found on PATH) or absolute path.' },
      env_passthrough: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }, default: [], description: 'Environment variables passed to the programs.' },
      timeout: { type: 'number', exclusiveMinimum: 0, maximum: MAX_TIMEOUT_SECONDS, default: 30, description: 'Seconds a program may run (also the upper limit for a call\'s timeout).' },
      max_output_bytes: { type: 'integer', minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024, description: 'Cap for each of stdout and stderr.' },
    },
  },
  guide: launcherPolicyText,
  create(host) {
    const config = host.config;
    const allowlist = resolveAllowlist(config.allowed_binaries, host.env.PATH ?? '');
    for (const name of allowlist.missing) host.log.warn(`cli_execute: allowed binary "${name}" was not found on PATH`);
    for (const name of allowlist.shells) host.log.warn(`cli_execute: allowed binary "${name}" is a shell interpreter and will never run`);
    const guard = new PathGuard(host.workDir);
    const turns = new RunTurns();
    return {
      async execute(args, ctx) {
        const root = guarded(guard, '.');
        if (isFailure(root)) return root;
        const workDir = root.absolute;
        const binary = checkBinary(allowlist, args.binary, workDir);
        if ('code' in binary) return fail(binary.code, binary.message, binary.hint);
        const home = host.env.HOME || homedir();
        const refusal = checkArguments(args.args, { workDir, home, binary });
        if (refusal) return fail(refusal.code, refusal.message, refusal.hint);
        const env = toolEnvironment({ workDir, passthrough: config.env_passthrough, parent: host.env });
        // git's turn is its own from its config check to its end (run-turns.ts), also when a wrapper (env, timeout, nice) runs it.
        const alone = isGit(binary) || (policyOfBinary(binary)?.wrapper !== undefined && args.args.some((arg) => isGit(checkBinary(allowlist, arg, workDir))));
        return turns.run(alone, async () => {
          if (ctx.signal.aborted) return fail('FORGE_TOOL_CANCELLED', `${binary.name} was not started: the call ended while it waited for its turn (git runs alone)`);
          const launch = await checkLaunch(binary, args.args, { allowlist, workDir, home, env });
          if ('code' in launch) return fail(launch.code, launch.message, launch.hint);
          if (args.timeout !== undefined && args.timeout > config.timeout) {
            return fail('FORGE_CLI_TIMEOUT_LIMIT', `timeout ${args.timeout} s is above the configured limit of ${config.timeout} s`, 'raise config.timeout of cli_execute in forge.yaml, or ask for less');
          }
          const timeoutMs = Math.round((args.timeout ?? config.timeout) * 1000);
          const result = await runCommand({
            command: binary.path,
            args: launch.args,
            cwd: workDir,
            env: { ...env, ...launch.env },
            stdin: args.stdin,
            timeoutMs,
            signal: ctx.signal,
            maxOutputBytes: config.max_output_bytes,
          });
          if (result.busy) return { ok: false, error: processesBusy(`"${binary.name}"`) };
          if (result.spawnError) return fail('FORGE_CLI_SPAWN', `"${binary.name}" (${binary.path}) could not be started: ${result.spawnError.code ?? result.spawnError.message}`);
          if (result.timedOut) {
            return fail('FORGE_CLI_TIMEOUT', `${binary.name} did not finish within ${formatDuration(timeoutMs)} and was stopped, with every process it started`, 'pass a longer timeout, or make the command do less', outputTail(result));
          }
          return ok(commandOutput(result));
        });
      },
    };
  },
});
