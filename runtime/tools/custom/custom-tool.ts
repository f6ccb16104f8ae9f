/**
 * A custom tool (Python, TypeScript or JavaScript file) as a Tool. `execute`
 * style tools are served by a ToolWorker; `script` style tools run one
 * process per call. Either way the process gets the minimal environment,
 * cwd = work dir, capped output, and a tree kill on timeout.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { declaresJson, outputText, parseJsonExact } from '../exact-output.ts';
import { fail, ok, type Tool, type ToolContext, type ToolResult, type ToolSpec } from '../model.ts';
import { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_STDERR_BYTES, howItEnded, runCommand, type CommandResult } from '../../exec/run-command.ts';
import { PYTHON_WORKER_HOST } from './python-host.ts';
import { PythonNotFoundError, resolvePython } from './python-interpreter.ts';
import { PYTHON_TOOL_ENV, toolEnvironment } from './tool-env.ts';
import { ToolWorker, type WorkerOutcome } from './tool-worker.ts';
import { CircuitBreaker } from './circuit-breaker.ts';
import { parseDuration } from '../../duration.ts';
import { processesBusy } from '../process-busy.ts';
import { wholeNumberSetting } from '../../exec/process-slots.ts';

export interface ProcessCommand {
  command: string;
  args: string[];
}

/** How TS/JS tools are started: from the built bundle, or compiled from sources. */
export interface NodeToolLauncher {
  worker(spec: ToolSpec): Promise<ProcessCommand>;
  script(spec: ToolSpec): Promise<ProcessCommand>;
}

export interface CustomToolHost {
  workDir: string;
  envPassthrough?: readonly string[];
  /** Absolute path of a tool's source file (for Python tools). */
  resolveSource(path: string): string;
  node: NodeToolLauncher;
  maxOutputBytes?: number;
  onStderr?: (tool: string, text: string) => void;
}

export function createCustomTool(spec: ToolSpec, host: CustomToolHost): Tool {
  const source = spec.source;
  if (!source || source.kind === 'yaml') throw new Error(`tool "${spec.name}" has no script source`);
  const env = () => toolEnvironment({ workDir: host.workDir, passthrough: host.envPassthrough, extra: source.kind === 'python' ? PYTHON_TOOL_ENV : {} });

  const command = async (mode: 'worker' | 'script'): Promise<ProcessCommand> => {
    if (source.kind === 'python') {
      const python = await resolvePython();
      const file = host.resolveSource(source.path);
      return mode === 'worker' ? { command: python, args: ['-c', PYTHON_WORKER_HOST, file] } : { command: python, args: [file] };
    }
    return mode === 'worker' ? host.node.worker(spec) : host.node.script(spec);
  };

  if (source.style === 'execute') {
    const worker = new ToolWorker(async () => ({ ...(await command('worker')), cwd: host.workDir, env: env() }), {
      maxResponseBytes: host.maxOutputBytes,
      // FORGE_TOOL_QUEUE (a whole number, 0 too) sets how many calls may wait for a tool's worker.
      maxQueued: wholeNumberSetting(process.env.FORGE_TOOL_QUEUE),
      onStderr: host.onStderr && ((text) => host.onStderr!(spec.name, text)),
    });
    const circuit = new CircuitBreaker({ coolDownMs: circuitCoolDownMs() });
    const callWorker = async (args: unknown, ctx: ToolContext): Promise<WorkerOutcome> => {
      // Python's execute(args) has no ctx: a warm Python call skips the tmpDir bookkeeping.
      if (source.kind === 'python') return worker.call(args, ctx.stop);
      // A fresh path the tool creates only if it uses ctx.tmpDir; removed here either way.
      const tmpDir = join(tmpdir(), `forge-${spec.name}-${randomBytes(8).toString('hex')}`);
      try {
        return await worker.call(args, ctx.stop, {
          tmpDir,
          depth: ctx.depth,
          onToolCall: (tool, toolArgs) => ctx.registry.execute(tool, toolArgs),
        });
      } finally {
        rmSync(tmpDir, { recursive: true, force: true });
      }
    };
    return {
      ...spec,
      async execute(args: unknown, ctx: ToolContext) {
        if (!circuit.tryEnter()) return circuitOpen(spec.name, circuit);
        const outcome = await callWorker(args, ctx);
        if (outcome.kind === 'crashed' || outcome.kind === 'spawn-failed') {
          circuit.failed(outcome.kind === 'crashed' ? `exited with ${outcome.signal ?? outcome.exitCode}` : outcome.error.message);
        } else if (outcome.kind === 'aborted' || outcome.kind === 'busy') circuit.released();
        else circuit.succeeded();
        return fromWorker(spec.name, outcome);
      },
      close: () => worker.close(),
      health: () => {
        const state = circuit.state;
        if (state === 'closed') return { healthy: true };
        return { healthy: false, circuit: state, detail: `its worker keeps failing (${circuit.lastFailure}); circuit ${state}` };
      },
    };
  }

  return {
    ...spec,
    async execute(args: unknown, ctx: ToolContext) {
      let cmd: ProcessCommand;
      try {
        cmd = await command('script');
      } catch (err) {
        return startFailure(spec.name, err);
      }
      const run = await runCommand({
        ...cmd,
        cwd: host.workDir,
        env: env(),
        stdin: JSON.stringify(args ?? {}),
        signal: ctx.signal,
        maxOutputBytes: host.maxOutputBytes,
        ...TOOL_PROCESS_OUTPUT,
      });
      return fromProcess(spec.name, run, host.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES, declaresJson(spec.outputSchema));
    },
  };
}


/**
 * A tool process's stdout is its result (a cut one is no use: stop it) and
 * its stderr is where a failure says why (keep the end).
 */
export const TOOL_PROCESS_OUTPUT = { onOverflow: 'stop', stderr: 'tail', maxStderrBytes: DEFAULT_MAX_STDERR_BYTES } as const;

function fromProcess(name: string, run: CommandResult, limit: number, json: boolean): ToolResult {
  if (run.busy) return { ok: false, error: processesBusy(`tool "${name}"`) };
  if (run.spawnError) return startFailure(name, run.spawnError);
  if (run.outputLimitHit) {
    return fail('FORGE_TOOL_OUTPUT_LIMIT', `tool "${name}" wrote more than the ${formatBytes(limit)} output limit and was stopped`, 'return less data, or write large results to a file and return its path');
  }
  if (run.cancelled) return fail('FORGE_TOOL_CANCELLED', `tool "${name}" was stopped`);
  if (run.exitCode !== 0) return fail('FORGE_TOOL_EXIT', `tool "${name}" ${howItEnded(run)}`, undefined, run.stderr || undefined);
  if (!json) return ok(outputText(run.stdout));
  try {
    return ok(parseJsonExact(run.stdout));
  } catch (err) {
    return fail('FORGE_TOOL_OUTPUT_JSON', `tool "${name}" declares a structured output, but what it printed is not JSON: ${(err as Error).message}`, 'print the result with json.dumps / JSON.stringify, or declare no Output: to return text');
  }
}

function fromWorker(name: string, outcome: WorkerOutcome): ToolResult {
  switch (outcome.kind) {
    case 'ok':
      return ok(outcome.value);
    case 'error': {
      const type = outcome.error.type && outcome.error.type !== 'Error' ? `${outcome.error.type}: ` : '';
      return fail('FORGE_TOOL_FAILED', `tool "${name}" failed: ${type}${outcome.error.message}`, undefined, outcome.error.traceback);
    }
    case 'crashed': {
      const how = outcome.signal ? `was killed by ${outcome.signal}` : `exited with code ${outcome.exitCode}`;
      return fail('FORGE_TOOL_CRASHED', `tool "${name}" ${how} during the call${outcome.stderr ? `: ${outcome.stderr}` : ''}`, 'the worker restarts on the next call');
    }
    case 'output-limit':
      return fail('FORGE_TOOL_OUTPUT_LIMIT', `tool "${name}" returned more than the ${formatBytes(outcome.limit)} limit and was stopped`, 'return less data, or write large results to a file and return its path');
    case 'spawn-failed':
      return startFailure(name, outcome.error);
    case 'aborted':
      return fail('FORGE_TOOL_CANCELLED', `tool "${name}" was stopped`);
    case 'busy':
      return retryAfter(fail('FORGE_TOOL_BUSY', `tool "${name}" is busy: ${outcome.waiting ? `${outcome.waiting} calls are already waiting for it` : 'it runs one call at a time'}`, 'try again shortly, or make fewer calls to it at once'), 1);
  }
}

function circuitOpen(name: string, circuit: CircuitBreaker): ToolResult {
  const seconds = Math.max(1, Math.ceil(circuit.retryInMs / 1000));
  const open = circuit.state === 'open';
  const result = fail(
    'FORGE_TOOL_CIRCUIT_OPEN',
    `tool "${name}" is not taking calls: its worker failed ${circuit.threshold} times in a row (${circuit.lastFailure})`,
    open ? `try again in ${seconds} s; the other tools are unaffected` : 'a trial call is running; try again shortly',
  );
  return retryAfter(result, open ? seconds : 1);
}

/** Says when the refusal may pass if sent again (REST sends it as Retry-After). */
function retryAfter(result: ToolResult, seconds: number): ToolResult {
  if (!result.ok) result.error.retryAfterSeconds = seconds;
  return result;
}

/** FORGE_TOOL_COOLDOWN ("30s", "500ms") sets how long a failing tool's circuit stays open. */
function circuitCoolDownMs(): number | undefined {
  const text = process.env.FORGE_TOOL_COOLDOWN;
  return text ? parseDuration(text) : undefined;
}

function startFailure(name: string, err: unknown): ToolResult {
  if (err instanceof PythonNotFoundError) {
    return fail('FORGE_PYTHON_MISSING', `tool "${name}" needs Python: ${err.message}`, 'install Python 3, or set FORGE_PYTHON to an interpreter');
  }
  return fail('FORGE_TOOL_START', `tool "${name}" could not be started: ${(err as Error).message}`);
}

/**
 * A YAML step's stdout as the value its references read: JSON (parsed
 * exactly, see exact-output.ts) when it is a JSON object or array, so
 * `{{ step.output.field }}` can reach in; otherwise the exact text minus one
 * trailing newline. Quoted text and bare numbers stay text.
 */
export function parseOutput(stdout: string): unknown {
  const text = stdout.trim();
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      return parseJsonExact(text);
    } catch {
      // plain text that happens to start like JSON
    }
  }
  return outputText(stdout);
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${+(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
