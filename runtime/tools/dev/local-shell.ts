import { homedir } from 'node:os';
import { commandOutput, outputTail, runCommand } from '../../exec/run-command.ts';
import { PathGuard } from '../../guard/path-guard.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { toolEnvironment } from '../custom/tool-env.ts';
import { guarded, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';
import { formatDuration } from '../registry.ts';
import { processesBusy } from '../process-busy.ts';

export const MAX_SHELL_TIMEOUT_SECONDS = 600;
const DEFAULT_CALL_TIMEOUT_SECONDS = 30;

export default defineBuiltin({
  spec: {
    name: 'local_shell',
    description: [
      'Development only: run a shell command line (pipes, redirects, globs and all) with /bin/sh -c (config `shell`) in the working directory. Not available in production builds.',
      'Returns the exit code, stdout and stderr (each cut at config max_output_bytes, default 1 MiB, with a truncated flag) and the duration. The command and everything it started are stopped after `timeout` seconds (default 30; at most config timeout, itself 120 by default).',
      'The shell gets PATH, LANG, HOME (the developer\'s home) and the variables config env_passthrough names — not the agent\'s secrets.',
    ].join('\n'),
    category: 'dev',
    tags: ['run'],
    timeoutMs: (MAX_SHELL_TIMEOUT_SECONDS + 10) * 1000,
    inputSchema: {
      type: 'object',
      required: ['command'],
      additionalProperties: false,
      properties: {
        command: { type: 'string', minLength: 1, maxLength: 100_000, description: 'The command line, e.g. "ls -la | head".' },
        timeout: { type: 'number', exclusiveMinimum: 0, maximum: MAX_SHELL_TIMEOUT_SECONDS, description: 'Seconds before the command is stopped (default 30, or config timeout if lower).' },
        stdin: { type: 'string', description: 'Text written to the command\'s standard input.' },
      },
    },
  },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      shell: { type: 'string', minLength: 1, default: '/bin/sh', description: 'The shell that runs the command (with -c).' },
      env_passthrough: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }, default: [], description: 'Environment variables passed to the shell.' },
      timeout: { type: 'number', exclusiveMinimum: 0, maximum: MAX_SHELL_TIMEOUT_SECONDS, default: 120, description: 'The longest timeout a call may ask for, in seconds.' },
      max_output_bytes: { type: 'integer', minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024, description: 'Cap for each of stdout and stderr.' },
    },
  },
  create(host) {
    const guard = new PathGuard(host.workDir);
    const config = host.config;
    return {
      async execute(args, ctx) {
        const { command, timeout = Math.min(DEFAULT_CALL_TIMEOUT_SECONDS, config.timeout), stdin } = args;
        if (timeout > config.timeout) return fail('FORGE_SHELL_TIMEOUT_LIMIT', `timeout ${timeout} s is above the configured limit of ${config.timeout} s`, 'raise config.timeout of local_shell in forge.yaml');
        const root = guarded(guard, '.');
        if (isFailure(root)) return root;
        const workDir = root.absolute;
        const timeoutMs = Math.round(timeout * 1000);
        const result = await runCommand({
          command: config.shell,
          args: ['-c', command],
          cwd: workDir,
          env: toolEnvironment({ workDir, passthrough: config.env_passthrough, parent: host.env, extra: { HOME: host.env.HOME || homedir() } }),
          stdin,
          timeoutMs,
          signal: ctx.signal,
          maxOutputBytes: config.max_output_bytes,
        });
        if (result.busy) return { ok: false, error: processesBusy('the command') };
        if (result.spawnError) return fail('FORGE_SHELL_SPAWN', `the shell ${config.shell} could not be started: ${result.spawnError.code ?? result.spawnError.message}`, 'set config.shell to an installed shell');
        if (result.timedOut) {
          return fail('FORGE_SHELL_TIMEOUT', `the command did not finish within ${formatDuration(timeoutMs)} and was stopped, with every process it started`, 'pass a longer timeout', outputTail(result));
        }
        return ok(commandOutput(result));
      },
    };
  },
});
