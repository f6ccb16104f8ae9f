import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { lastLines } from '../../exec/output-buffer.ts';
import { runCommand } from '../../exec/run-command.ts';
import { shellQuote } from '../../exec/shell-quote.ts';
import { PathGuard } from '../../guard/path-guard.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { toolEnvironment } from '../custom/tool-env.ts';
import { guarded, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';
import { formatDuration } from '../registry.ts';
import { readTestCounts } from './test-summary.ts';
import { processesBusy } from '../process-busy.ts';

export const MAX_TEST_TIMEOUT_SECONDS = 3600;
/** Characters of output returned (the end of it, where runners print their summary). */
const OUTPUT_TAIL_CHARS = 12_000;

export default defineBuiltin({
  spec: {
    name: 'test_runner',
    description: [
      'Development only: run the project\'s tests and report pass or fail. The command is config `command` (a command line run with /bin/sh -c in the working directory); without one it is detected: `npm test` (package.json with a test script), `python3 -m pytest` (pyproject.toml, pytest.ini, setup.cfg, tox.ini or conftest.py), `go test ./...` (go.mod), `cargo test` (Cargo.toml) or `make test` (a Makefile with a test target). Not available in production builds.',
      '`args` are appended, each quoted. The run gets CI=1 and NO_COLOR=1 so runners neither watch nor colour. Returns `passed` (exit code 0), the exit code, the counts of passed, failed and skipped tests when the output has a summary it knows (vitest, jest, pytest, node:test, mocha, cargo, go, unittest, or "N passed, N failed"), the duration and the last 12000 characters of output.',
      'Stopped, with every process it started, after `timeout` seconds (default config timeout, 300).',
    ].join('\n'),
    category: 'dev',
    tags: ['run'],
    timeoutMs: (MAX_TEST_TIMEOUT_SECONDS + 10) * 1000,
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        args: { type: 'array', items: { type: 'string' }, default: [], description: 'Extra arguments, e.g. a test file or a filter.' },
        timeout: { type: 'number', exclusiveMinimum: 0, maximum: MAX_TEST_TIMEOUT_SECONDS, description: 'Seconds before the run is stopped (at most the configured timeout).' },
      },
    },
  },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      command: { type: 'string', minLength: 1, description: 'The test command line, e.g. "npm test" or "pytest -q".' },
      shell: { type: 'string', minLength: 1, default: '/bin/sh', description: 'The shell that runs the command (with -c).' },
      env_passthrough: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }, default: [], description: 'Environment variables passed to the tests.' },
      timeout: { type: 'number', exclusiveMinimum: 0, maximum: MAX_TEST_TIMEOUT_SECONDS, default: 300, description: 'Seconds a run may take.' },
      max_output_bytes: { type: 'integer', minimum: 1024, maximum: 64 * 1024 * 1024, default: 4 * 1024 * 1024, description: 'Output kept from each of stdout and stderr.' },
    },
  },
  create(host) {
    const guard = new PathGuard(host.workDir);
    const config = host.config;
    return {
      async execute(input, ctx) {
        const { args, timeout = config.timeout } = input;
        if (timeout > config.timeout) return fail('FORGE_TEST_TIMEOUT_LIMIT', `timeout ${timeout} s is above the configured limit of ${config.timeout} s`, 'raise config.timeout of test_runner in forge.yaml');
        const root = guarded(guard, '.');
        if (isFailure(root)) return root;
        const workDir = root.absolute;
        const base = config.command ?? detectTestCommand(workDir);
        if (!base) return fail('FORGE_TEST_COMMAND', 'no test command is configured and none was detected in the working directory', 'set config.command of test_runner in forge.yaml, e.g. "npm test"');
        const command = [base, ...args.map(shellQuote)].join(' ');
        const timeoutMs = Math.round(timeout * 1000);
        const result = await runCommand({
          command: config.shell,
          args: ['-c', command],
          cwd: workDir,
          env: toolEnvironment({ workDir, passthrough: config.env_passthrough, parent: host.env, extra: { HOME: host.env.HOME || homedir(), CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' } }),
          timeoutMs,
          signal: ctx.signal,
          maxOutputBytes: config.max_output_bytes,
        });
        if (result.busy) return { ok: false, error: processesBusy('the tests') };
        if (result.spawnError) return fail('FORGE_TEST_SPAWN', `the shell ${config.shell} could not be started: ${result.spawnError.code ?? result.spawnError.message}`);
        const output = [result.stdout, result.stderr].filter(Boolean).join('\n');
        if (result.timedOut) {
          return fail('FORGE_TEST_TIMEOUT', `the tests did not finish within ${formatDuration(timeoutMs)} and were stopped`, 'pass a longer timeout, or run fewer tests with args', lastLines(output, 4000));
        }
        const counts = readTestCounts(output);
        return ok({
          passed: result.exitCode === 0,
          exit_code: result.exitCode,
          command,
          summary: counts ?? null,
          duration_ms: result.durationMs,
          // Whole lines: a secret the cut went through would not be recognised, and its end would show.
          output: output.length > OUTPUT_TAIL_CHARS ? lastLines(output, OUTPUT_TAIL_CHARS) : output,
          output_truncated: output.length > OUTPUT_TAIL_CHARS || result.stdoutTruncated || result.stderrTruncated,
        });
      },
    };
  },
});

const NPM_PLACEHOLDER = 'no test specified';

export function detectTestCommand(dir: string): string | undefined {
  const has = (name: string) => existsSync(join(dir, name));
  if (has('package.json')) {
    try {
      const script = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts?: { test?: string } }).scripts?.test;
      if (script && !script.includes(NPM_PLACEHOLDER)) return 'npm test';
    } catch {
      // Not JSON: not a Node project we can run.
    }
  }
  if (['pyproject.toml', 'pytest.ini', 'setup.cfg', 'tox.ini', 'conftest.py'].some(has)) return 'python3 -m pytest';
  if (has('go.mod')) return 'go test ./...';
  if (has('Cargo.toml')) return 'cargo test';
  if (has('Makefile') && /^test\s*:/m.test(readFileSync(join(dir, 'Makefile'), 'utf8'))) return 'make test';
  return undefined;
}

