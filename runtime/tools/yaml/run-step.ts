/** Runs one prepared step: a process (with its script written to the call's temp dir) or a tool call. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { howItEnded, runCommand } from '../../exec/run-command.ts';
import { launcherNotFound } from '../../exec/launcher-not-found.ts';
import { parseOutput, TOOL_PROCESS_OUTPUT } from '../custom/custom-tool.ts';
import type { ToolContext } from '../model.ts';
import { SCRIPT_FILE, type PreparedStep } from './prepare-step.ts';
import type { StepResult } from './run-values.ts';
import { textOf } from './template.ts';
import { timerDelay } from '../../duration.ts';
import { processesBusy } from '../process-busy.ts';

export interface StepRunOptions {
  ctx: ToolContext;
  signal: AbortSignal;
  maxOutputBytes?: number;
  /** A unique file name stem for the step's script. */
  scriptName: string;
}

export async function runPreparedStep(prepared: PreparedStep, options: StepRunOptions): Promise<StepResult> {
  if (prepared.kind === 'tool') {
    const result = await options.ctx.registry.execute(prepared.tool, prepared.args, { signal: options.signal });
    if (result.ok) return { status: 'ok', output: result.value, stdout: textOf(result.value), stderr: '', exitCode: 0, fromTool: true };
    return { status: 'failed', output: null, stdout: '', stderr: result.error.message, exitCode: 1, error: result.error };
  }

  let argv = prepared.argv;
  let file: string | undefined;
  if (prepared.script) {
    file = join(options.ctx.tmpDir, `${options.scriptName}${prepared.script.extension}`);
    writeFileSync(file, prepared.script.text, { mode: 0o600 });
    argv = argv.map((a) => a.split(SCRIPT_FILE).join(file!));
  }
  // A step with its own timeout (cycod's step-level timeout:) stops at the sooner of its limit and the tool's.
  const stepLimit = prepared.timeoutMs !== undefined ? AbortSignal.timeout(timerDelay(prepared.timeoutMs)) : undefined;
  const run = await runCommand({
    command: argv[0],
    args: argv.slice(1),
    cwd: prepared.cwd,
    env: prepared.env,
    ...(prepared.stdin !== undefined ? { stdin: prepared.stdin } : {}),
    signal: stepLimit ? AbortSignal.any([options.signal, stepLimit]) : options.signal,
    maxOutputBytes: options.maxOutputBytes,
    ...TOOL_PROCESS_OUTPUT,
  });
  const { stderr } = run;
  if (run.busy) return failed('', '', processesBusy(`"${argv[0]}"`));
  if (run.spawnError || launcherNotFound(run.exitCode, stderr, argv[0])) {
    const missing = !run.spawnError || (run.spawnError as NodeJS.ErrnoException).code === 'ENOENT';
    const hint = 'install it where PATH finds it, or give its full path';
    return failed(run.stdout, stderr, missing ? { code: 'FORGE_TOOL_START', message: `"${argv[0]}" was not found`, hint } : { code: 'FORGE_TOOL_START', message: `"${argv[0]}" could not be started: ${run.spawnError!.message}` });
  }
  if (run.outputLimitHit) return failed(run.stdout, stderr, { code: 'FORGE_TOOL_OUTPUT_LIMIT', message: 'wrote more output than the limit and was stopped', hint: 'write large results to a file' });
  if (run.cancelled && stepLimit?.aborted && !options.signal.aborted) {
    return failed(run.stdout, stderr, { code: 'FORGE_YAML_STEP_TIMEOUT', message: `did not finish within its timeout of ${prepared.timeoutMs} ms and was stopped`, hint: 'raise the step\'s timeout:' });
  }
  if (run.cancelled) return failed(run.stdout, stderr, { code: 'FORGE_TOOL_CANCELLED', message: 'was stopped' });
  if (run.exitCode !== 0) {
    const python = file && prepared.script?.lines ? pythonErrorLine(stderr, file, prepared.script.lines) : undefined;
    return { status: 'failed', output: parseOutput(run.stdout), stdout: run.stdout, stderr, exitCode: run.exitCode, error: { code: 'FORGE_YAML_STEP_EXIT', message: howItEnded(run) }, ...(python ? { python } : {}) };
  }
  return { status: 'ok', output: parseOutput(run.stdout), stdout: run.stdout, stderr, exitCode: 0 };
}

function failed(stdout: string, stderr: string, error: StepResult['error'] & object): StepResult {
  return { status: 'failed', output: null, stdout, stderr, exitCode: null, error };
}

/**
 * The line of the step's script that Python's error names (the innermost frame in the script
 * file; `lines` maps the rendered script back to the script as written), and whether it is a
 * syntax error (reported before anything ran: no traceback).
 */
function pythonErrorLine(stderr: string, file: string, lines: readonly number[]): StepResult['python'] {
  const frame = `File ${JSON.stringify(file)}, line `;
  const at = stderr.lastIndexOf(frame);
  if (at < 0) return undefined;
  const rendered = Number(/^\d+/.exec(stderr.slice(at + frame.length))?.[0]);
  if (!rendered) return undefined;
  const last = stderr.trimEnd().split('\n').pop() ?? '';
  const syntax = !stderr.slice(0, at).includes('Traceback (most recent call last)') && /^(SyntaxError|IndentationError|TabError)\b/.test(last);
  return { line: lines[rendered - 1] ?? rendered, syntax, scriptFile: file, lines };
}
