/**
 * The registry holds every tool the agent can call and is the one door
 * through which calls go: it checks names, validates arguments, applies the
 * timeout, scopes composed tools to what they declared, and turns every
 * failure into a ToolResult.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { error, ForgeError, type Diagnostic } from '../diagnostics.ts';
import { STATE_UNAVAILABLE_MESSAGE, StateUnavailableError } from '../store-unavailable.ts';
import type { ApprovalPolicy } from '../guard/approval-policy.ts';
import { checkApproval, type ApprovalOutcome, type CallFrame } from './approval-gate.ts';
import { fail, type ExecuteOptions, type JSONSchema, type Logger, type Tool, type ToolContext, type ToolResult, type ToolRunner } from './model.ts';
import { checkToolName } from './names.ts';
import { MAX_ARGUMENT_DEPTH, MAX_COMPOSITION_DEPTH } from './limits.ts';
import { checkArguments, nestsDeeperThan } from './validation.ts';
import { checkedInputSchema } from './local-schema.ts';
import { checkOutput } from './output-check.ts';
import { redactedResult } from './redacted-result.ts';
import { runAsTool } from '../exec/tool-sandbox.ts';
import { CallStop, type StopNotice } from './call-stop.ts';
import { timerDelay } from '../duration.ts';
import { someNames, unknownTool } from './unknown-tool.ts';
import { visibleTo } from './emergent/forged-mark.ts';

export const DEFAULT_TIMEOUT_MS = 60_000;
export { MAX_COMPOSITION_DEPTH };

export interface RegistryOptions {
  workDir: string;
  log?: Logger;
  defaultTimeoutMs?: number;
  /** Decides which calls need a person's confirmation; without one, every call runs (in-process use, tests). */
  approval?: ApprovalPolicy;
  /** A result that does not match the tool's declared Output fails the call (else it is a logged warning). */
  strictOutputs?: boolean;
}

export interface CallEvent {
  name: string;
  args: unknown;
  result: ToolResult;
  durationMs: number;
  depth: number;
  /** The conversation or MCP session the call came from (absent: none, e.g. REST or the CLI). */
  session?: string;
  /** How the call passed the approval check (absent when it never got that far). */
  approval?: ApprovalOutcome;
}

interface Entry {
  tool: Tool;
  origin: string;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {} };

export class ToolRegistry implements ToolRunner {
  readonly workDir: string;
  private readonly entries = new Map<string, Entry>();
  private readonly log: Logger;
  private readonly defaultTimeoutMs: number;
  private readonly listeners = new Set<(event: CallEvent) => void>();
  private readonly changeListeners = new Set<() => void>();
  private changePending = false;
  private policy?: ApprovalPolicy;
  private strictOutputs: boolean;
  /** Calls in flight per tool object, so a replaced tool is closed only once its calls finish. */
  private readonly active = new Map<Tool, number>();
  private readonly idleWaiters = new Map<Tool, (() => void)[]>();
  /** What the tools share and no one tool closes (the adapter runtime's connections): closed after them. */
  private readonly owned = new Set<{ close(): Promise<void> }>();
  private lookup: ((name: string) => Promise<void>) | undefined;
  private leftOut: ((name: string) => string | undefined) | undefined;

  constructor(options: RegistryOptions) {
    this.workDir = options.workDir;
    this.policy = options.approval;
    this.strictOutputs = options.strictOutputs ?? false;
    this.log = options.log ?? silentLogger;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** The approval policy every call goes through (absent: every call runs). */
  get approval(): ApprovalPolicy | undefined {
    return this.policy;
  }

  /**
   * Puts another policy in force (forge.yaml's `approval:` saved under
   * `forge run --dev`): every call checked from now on is checked by it, a
   * call resumed after a person's answer included. There is no way back to
   * none: a registry made with a policy keeps one.
   */
  setApproval(policy: ApprovalPolicy): void {
    if (!this.policy) throw new Error('this registry runs every call: it was made without an approval policy');
    this.policy = policy;
  }

  /** forge.yaml's strict_outputs, saved under `forge run --dev`: the calls that end from now on are checked so. */
  setStrictOutputs(strict: boolean): void {
    this.strictOutputs = strict;
  }

  /** Adds a tool; a bad name or a second tool with the same name is a diagnostic naming both sources. */
  register(tool: Tool, origin: string): Diagnostic | undefined {
    const nameProblem = checkToolName(tool.name, tool.category);
    if (nameProblem) return error('FORGE_TOOL_NAME', nameProblem, { file: origin });
    const existing = this.entries.get(tool.name);
    if (existing) {
      return error(
        'FORGE_TOOL_COLLISION',
        `tool "${tool.name}" is defined twice: ${existing.origin} and ${origin}`,
        { file: origin },
        'rename one of them; tool names must be unique across builtin, adapter and custom tools',
      );
    }
    this.entries.set(tool.name, { tool, origin });
    this.toolsChanged();
    return undefined;
  }

  /** Replaces a tool (hot reload); the old instance is returned so in-flight calls can finish on it. */
  replace(tool: Tool, origin: string): Tool | undefined {
    const previous = this.entries.get(tool.name)?.tool;
    this.entries.set(tool.name, { tool, origin });
    this.toolsChanged();
    return previous;
  }

  unregister(name: string): Tool | undefined {
    const previous = this.entries.get(name)?.tool;
    if (this.entries.delete(name)) this.toolsChanged();
    return previous;
  }

  get(name: string): Tool | undefined {
    return this.entries.get(name)?.tool;
  }

  /**
   * Asked before a name is answered as unknown, to register the tool if it
   * exists elsewhere (forge_tool: forged on another replica, not yet heard of here).
   */
  setLookup(lookup: ((name: string) => Promise<void>) | undefined): void {
    this.lookup = lookup;
  }

  /**
   * Why a name is not here though the agent could have it (an MCP server's tool that forge.yaml's
   * tools.allow/deny leaves out): said in the unknown-tool answer instead of a likely other tool.
   */
  setLeftOut(leftOut: ((name: string) => string | undefined) | undefined): void {
    this.leftOut = leftOut;
  }

  /** The tool, looked up (setLookup) when it is not registered here. */
  async find(name: string): Promise<Tool | undefined> {
    const tool = this.entries.get(name)?.tool;
    if (tool || !this.lookup) return tool;
    try {
      await this.lookup(name);
    } catch (err) {
      this.log.warn(`looking up tool "${name}" failed: ${(err as Error).message}`);
    }
    return this.get(name);
  }

  originOf(name: string): string | undefined {
    return this.entries.get(name)?.origin;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Tools sorted by name, so every listing is stable. */
  list(): Tool[] {
    return [...this.entries.values()].map((e) => e.tool).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The tools a caller in `session` may see and call (undefined: one without a session), sorted by name. */
  listFor(session: string | undefined): Tool[] {
    return this.list().filter((t) => visibleTo(t, session));
  }

  /**
   * Called once after the tool set changed (a tool registered, replaced or
   * unregistered: hot reload, a forged tool), however many changes a
   * reload made at once: changes in one turn of the event loop are told once.
   */
  onToolsChanged(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Tells the listeners the tool set changed, for a change made elsewhere (a tool's own schema). */
  toolsChanged(): void {
    if (this.changePending || this.changeListeners.size === 0) return;
    this.changePending = true;
    queueMicrotask(() => {
      this.changePending = false;
      for (const listener of [...this.changeListeners]) listener();
    });
  }

  onCall(listener: (event: CallEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  execute(name: string, args: unknown, options: ExecuteOptions = {}): Promise<ToolResult> {
    const { approver, approved, session, sees, ...rest } = options;
    return this.call(name, args, rest, { depth: 0, chain: [], covered: false, approver, approved: approved === true, ...(session ? { session } : {}), ...(sees ? { sees } : {}) });
  }

  /** Closes every tool, then what they share (own): every caller's shutdown is closing the registry. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.entries.values()].map((e) => e.tool.close?.()));
    await Promise.allSettled([...this.owned].map((resource) => resource.close()));
  }

  /**
   * Makes `resource`, shared by tools (the adapter runtime and its MCP connections), the registry's to close
   * when it closes: retiring a tool (hot reload) leaves it open for the others. Until `disown` (a runtime
   * hot reload replaced, closed by itself once its calls are done).
   */
  own(resource: { close(): Promise<void> }): void {
    this.owned.add(resource);
  }

  disown(resource: { close(): Promise<void> }): void {
    this.owned.delete(resource);
  }

  /** Resolves when no call is running on `tool` (it may have been replaced or unregistered). */
  whenIdle(tool: Tool): Promise<void> {
    if (!this.active.get(tool)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.idleWaiters.get(tool) ?? [];
      waiters.push(resolve);
      this.idleWaiters.set(tool, waiters);
    });
  }

  /** Closes a tool that is no longer registered once its in-flight calls are done (hot reload). */
  async retire(tool: Tool): Promise<void> {
    await this.whenIdle(tool);
    await tool.close?.();
  }

  private enter(tool: Tool): void {
    this.active.set(tool, (this.active.get(tool) ?? 0) + 1);
  }

  private leave(tool: Tool): void {
    const left = (this.active.get(tool) ?? 1) - 1;
    if (left > 0) return void this.active.set(tool, left);
    this.active.delete(tool);
    for (const resolve of this.idleWaiters.get(tool) ?? []) resolve();
    this.idleWaiters.delete(tool);
  }

  private async call(name: string, args: unknown, options: ExecuteOptions, frame: CallFrame): Promise<ToolResult> {
    const started = performance.now();
    const outcome: { approval?: ApprovalOutcome } = {};
    // Masked here, the one door every result passes, before the model, a client, a listener (logs, traces, the studio) sees it.
    const result = redactedResult(await this.run(name, args, options, frame, outcome));
    const durationMs = performance.now() - started;
    result.durationMs = durationMs;
    for (const listener of this.listeners) listener({ name, args, result, durationMs, depth: frame.depth, session: frame.session, ...outcome });
    return result;
  }

  private async run(name: string, args: unknown, options: ExecuteOptions, frame: CallFrame, outcome: { approval?: ApprovalOutcome }): Promise<ToolResult> {
    const { depth } = frame;
    const tool = this.get(name) ?? (await this.find(name));
    // Checked after the look-up, which may have registered the tool just now (forged on another
    // replica). Another session's tool is answered as unknown, suggesting only what the caller's
    // session may see: a composition's missing step reaches here too.
    if (!tool || !(frame.sees || visibleTo(tool, frame.session))) {
      // Only an adapter's name ("server__tool") can be left out; no forged tool has such a name.
      const why = tool ? undefined : this.leftOut?.(name);
      if (why) return fail('FORGE_TOOL_UNKNOWN', `no tool named "${name}": ${why}`, 'allow it there, and build again');
      return unknownTool(name, this.listFor(frame.session).map((t) => t.name));
    }
    if (depth > MAX_COMPOSITION_DEPTH) {
      return fail('FORGE_TOOL_DEPTH', `tool "${name}" is nested ${depth} calls deep (${[...frame.chain, name].join(' → ')}); the limit is ${MAX_COMPOSITION_DEPTH}`);
    }
    if (frame.chain.includes(name)) {
      const cycle = [...frame.chain.slice(frame.chain.indexOf(name)), name].join(' → ');
      return fail('FORGE_TOOL_CYCLE', `tool "${name}" calls itself in a cycle: ${cycle}`, 'a composed tool may not call, directly or through others, a tool that is already running it');
    }
    let checked;
    try {
      checked = checkArguments(checkedInputSchema(tool), args);
    } catch (err) {
      // Forge's own errors keep their code: a validator library refused by the bundle check is FORGE_BUNDLE_TAMPERED, not a bad schema.
      if (err instanceof ForgeError) return thrownToResult(name, err);
      // Arguments nested deeper than the validator's stack holds are the caller's, not a broken schema.
      if (err instanceof RangeError && nestsDeeperThan(args, MAX_ARGUMENT_DEPTH)) {
        return fail('FORGE_TOOL_ARGS', `invalid arguments for "${name}": they nest more than ${MAX_ARGUMENT_DEPTH} levels deep`, 'send flatter arguments');
      }
      return fail('FORGE_SCHEMA_INVALID', `tool "${name}" has an input schema that cannot be compiled: ${(err as Error).message}`);
    }
    if (!checked.ok) {
      return fail('FORGE_TOOL_ARGS', `invalid arguments for "${name}": ${checked.errors.join('; ')}`, argumentsHint(tool.inputSchema));
    }
    // Before the clock starts: a person may take a while to answer.
    const gate = await checkApproval(tool, checked.args, frame, this.approval, (n) => this.get(n));
    if (!gate.ok) return gate.result;
    outcome.approval = gate.outcome;

    const timeoutMs = options.timeoutMs ?? tool.timeoutMs ?? this.defaultTimeoutMs;
    // The call's AbortSignal is made only when something asks for it (a tool process, a
    // sub-call, a fetch): an AbortController costs more to make and to collect than the
    // whole of a builtin's call, and most builtins never look at it.
    let controller: AbortController | undefined;
    let stopped: { reason: unknown; result: ToolResult } | undefined;
    // The call's answer: the tool's result or the stop, whichever comes first (one promise
    // settled from both sides; Promise.race would make three more per call).
    let answer: ((result: ToolResult) => void) | undefined;
    const notice = new CallStop();
    const stop = (reason: unknown, timedOut: boolean) => {
      if (stopped) return;
      stopped = {
        reason,
        result: timedOut
          ? fail('FORGE_TOOL_TIMEOUT', `tool "${name}" timed out after ${formatDuration(timeoutMs)}`, 'raise its Timeout or pass --timeout')
          : fail('FORGE_TOOL_CANCELLED', `tool "${name}" was cancelled`),
      };
      notice.abort(reason);
      controller?.abort(reason);
      answer?.(stopped.result);
    };
    const signal = (): AbortSignal => {
      if (!controller) {
        controller = new AbortController();
        if (stopped) controller.abort(stopped.reason);
      }
      return controller.signal;
    };
    const onOuterAbort = () => stop(options.signal?.reason, false);
    options.signal?.addEventListener('abort', onOuterAbort, { once: true });
    if (options.signal?.aborted) stop(options.signal.reason, false);
    const timer = setTimeout(() => stop(new Error('timeout'), true), timerDelay(timeoutMs));

    const ctx = new CallContext(this.scopedRunner(tool, frame, gate.coversSubCalls, signal), this.workDir, depth, this.log, name, signal, notice, frame.session);

    this.enter(tool);
    try {
      return await new Promise<ToolResult>((resolve) => {
        answer = resolve;
        // Async, so that an execute() that throws before it returns a promise, or a result whose
        // reading throws, fails the call like a rejection does: as an error result.
        const execute = async () => checkOutput(tool, await tool.execute(checked.args, ctx), { strict: this.strictOutputs, log: this.log });
        runAsTool({ tool: name, tmpDir: () => ctx.madeTmpDir }, execute).then(resolve, (err: unknown) => resolve(thrownToResult(name, err)));
        // Stopped before the tool ran (the caller had aborted): that is the answer, though the tool was started.
        if (stopped) resolve(stopped.result);
      });
    } finally {
      this.leave(tool);
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onOuterAbort);
      if (ctx.madeTmpDir) rmSync(ctx.madeTmpDir, { recursive: true, force: true });
    }
  }

  /**
   * What a tool may call: only its declared composedOf, one level deeper,
   * under the approval of the call it is made from. The tool's own options
   * cannot approve anything (approver and approved are not taken from it).
   */
  private scopedRunner(caller: Tool, frame: CallFrame, covered: boolean, signal: () => AbortSignal): ToolRunner {
    const allowed = caller.composedOf ?? [];
    return {
      execute: (name, args, options = {}) => {
        if (!allowed.includes(name)) {
          return Promise.resolve(
            fail(
              'FORGE_TOOL_NOT_COMPOSED',
              `tool "${caller.name}" may not call "${name}": it is not in its composedOf list`,
              allowed.length ? `it may call: ${allowed.join(', ')}` : 'declare composedOf to call other tools',
            ),
          );
        }
        const sub: CallFrame = { depth: frame.depth + 1, chain: [...frame.chain, caller.name], covered, approver: frame.approver, approved: false, ...(frame.session ? { session: frame.session } : {}), ...(frame.sees === 'everything' ? { sees: frame.sees } : {}) };
        return this.call(name, args, { timeoutMs: options.timeoutMs, signal: options.signal ?? signal() }, sub);
      },
    };
  }
}

/**
 * A call's ToolContext: its temp dir and its signal are made on first use.
 * A class, not an object literal with getters: V8 allocates a literal with
 * accessors in a way that kept every call's objects alive through young-
 * generation GCs (a builtin call: 3.6 µs with the literal, 0.7 µs without,
 * bundled, in a loop).
 */
class CallContext implements ToolContext {
  private dir?: string;

  constructor(
    readonly registry: ToolRunner,
    readonly workDir: string,
    readonly depth: number,
    readonly log: Logger,
    private readonly toolName: string,
    private readonly makeSignal: () => AbortSignal,
    readonly stop: StopNotice,
    readonly session?: string,
  ) {}

  get tmpDir(): string {
    return (this.dir ??= mkdtempSync(join(tmpdir(), `forge-${this.toolName}-`)));
  }

  get signal(): AbortSignal {
    return this.makeSignal();
  }

  /** The temp dir, if the call made one. */
  get madeTmpDir(): string | undefined {
    return this.dir;
  }
}

function thrownToResult(name: string, err: unknown): ToolResult {
  // A tool that reads or writes the state store (schedules, forged tools, files) while the store is away
  // (the store says so; a tool's own connection refused is the tool's failure): the client is told to
  // retry, and the log gets the driver's one line, not its stack.
  if (err instanceof StateUnavailableError) return { ok: false, error: { code: err.code, message: `tool "${name}" failed: ${STATE_UNAVAILABLE_MESSAGE}`, hint: err.hint, details: err.reason, retryAfterSeconds: 1 } };
  // Forge's own errors keep their code and hint (an egress refusal stays FORGE_EGRESS_REFUSED).
  if (err instanceof ForgeError) return fail(err.code, err.message, err.hint, err.stack);
  const message = err instanceof Error ? err.message : String(err);
  const details = err instanceof Error ? err.stack : undefined;
  return fail('FORGE_TOOL_FAILED', `tool "${name}" failed: ${message}`, undefined, details);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms % 60_000 === 0) return `${ms / 60_000} m`;
  return `${+(ms / 1000).toFixed(2)} s`;
}

/**
 * What a tool takes, as the hint of a call whose arguments were wrong: every caller can act on it (a model
 * over MCP or A2A, a script over REST, a person at a bundle with no forge command), not only one at the CLI.
 */
export function argumentsHint(schema: JSONSchema): string {
  const properties = (schema.properties as Record<string, JSONSchema> | undefined) ?? {};
  const names = Object.keys(properties);
  if (!names.length) return 'it takes no arguments';
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  // Each with its type: a value of the wrong type ("2" for an integer) is the commonest mistake it answers.
  const label = (n: string) => {
    const type = properties[n]?.type;
    const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type.filter((t): t is string => typeof t === 'string') : [];
    const parts = [...(types.length ? [types.join(' or ')] : []), ...(required.has(n) ? ['required'] : [])];
    return parts.length ? `${n} (${parts.join(', ')})` : n;
  };
  return `its arguments: ${someNames(names.map(label))}`;
}
