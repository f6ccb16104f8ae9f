/**
 * One agent turn: send the conversation and the tool definitions to the
 * model, run the tool calls it asks for (all calls of one answer in
 * parallel — the model issued them together, so they are independent),
 * feed the results back, and repeat until the model answers without tool
 * calls or `maxIterations` is reached. Tool errors go back to the model as
 * results. A call the approval gate wants a person to decide pauses the
 * turn; `resumeAgentTurn` continues it with the person's answers.
 */
import { randomUUID } from 'node:crypto';
import { defaultMaxListeners, getMaxListeners, setMaxListeners } from 'node:events';
import { fail, type ToolResult, type ToolSpec } from '../tools/model.ts';
import type { ApprovalGate, GateDecision } from './approval-gate.ts';
import { endedEarly, unparsedArguments, type ChatMessage, type ModelProvider, type ToolCall } from './messages.ts';
import { DEFAULT_TOOL_OUTPUT_BUDGET, toolResultText } from './tool-output.ts';
import { traceToolCall } from '../telemetry/instrument-tools.ts';
import { countGateDecisions, countPersonAnswers } from '../telemetry/instrument-turn.ts';
import { unknownTool } from '../tools/unknown-tool.ts';
import { isSessionTool } from '../tools/emergent/forged-mark.ts';
import { ownValue } from '../own-value.ts';

export const DEFAULT_MAX_ITERATIONS = 10;

export interface AgentTools {
  list(): ToolSpec[];
  /** A tool not in list() when the turn began, looked up further (forged on another replica meanwhile). */
  resolve?(name: string): Promise<ToolSpec | undefined>;
  /** `instrumented`: the loop counts and traces the call itself (frontend "agent"). */
  execute(name: string, args: unknown, options?: { signal?: AbortSignal; instrumented?: boolean }): Promise<ToolResult>;
}

export type AgentEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'tool-result'; call: ToolCall; result: ToolResult }
  | { type: 'approval-needed'; requests: ApprovalRequest[] };

export interface ApprovalRequest {
  callId: string;
  tool: string;
  arguments: unknown;
  /** Why a person must decide (the tool's security tags). */
  reason: string;
}

/**
 * What the loop decided for one call: the gate's answer, or `unknown` when
 * no tool had the name at the time — such a call is refused like any unknown
 * name, even if a tool of that name appears before it runs (forged by a
 * sibling call), since the gate never saw it. `malformed` and `cut-off`:
 * its arguments are not JSON, written wrong or cut off at the model's output
 * limit; it is refused without running or asking anyone, and the model is
 * told why (a cut-off file_write would otherwise be retried as it was).
 */
export type CallDecision = GateDecision | 'unknown' | 'malformed' | 'cut-off';

/**
 * A paused batch of tool calls: what the gate decided, and which calls wait
 * for a person. Kept in the session as JSON, so `decisions` is a plain
 * object, keyed by the ids the loop gave the calls (see normalizeCallIds):
 * unique in the batch and never a name Object.prototype has.
 */
export interface PendingApproval {
  calls: ToolCall[];
  decisions: Record<string, CallDecision>;
}

/** A person's answers, call id → yes/no: a Map, or an object whose own properties are read. */
export type ApprovalAnswers = ReadonlyMap<string, boolean> | Readonly<Record<string, boolean>>;

export type AgentOutcome =
  /** `endedEarly`: the provider ended the answer (its output limit, its filter); `text` ends with a note saying so. */
  | { status: 'completed'; text: string; endedEarly?: 'cut-off' | 'filtered' }
  | { status: 'input-required'; pending: PendingApproval; requests: ApprovalRequest[] }
  | { status: 'max-iterations'; text: string };

export interface AgentLoopOptions {
  model: ModelProvider;
  tools: AgentTools;
  gate: ApprovalGate;
  system?: string;
  maxIterations?: number;
  toolOutputBudget?: number;
  maxTokens?: number;
  temperature?: number;
  /** Stream the model's text through onEvent as it arrives. */
  stream?: boolean;
  signal?: AbortSignal;
  /** The conversation's id, sent with each model request (what is learned of its context window is its own). */
  conversation?: string;
  /** The A2A task the turn is for, sent with each model request (its retries name it in the log). */
  task?: string;
  onEvent?: (event: AgentEvent) => void;
}

/** Runs a turn on `messages` (which end with the user's message); appends everything it adds. */
export async function runAgentTurn(messages: ChatMessage[], options: AgentLoopOptions): Promise<AgentOutcome> {
  return loop(messages, options);
}

/** Continues a paused turn: `answers` maps each waiting call id to the person's yes or no. */
export async function resumeAgentTurn(messages: ChatMessage[], pending: PendingApproval, answers: ApprovalAnswers, options: AgentLoopOptions): Promise<AgentOutcome> {
  await settlePending(messages, pending, answers, options);
  return loop(messages, options);
}

/**
 * Runs a paused batch with the person's answers (a call without one is
 * refused) and records the results, without asking the model anything: the
 * conversation is whole again, ready for a new message or for the model.
 */
export async function settlePending(messages: ChatMessage[], pending: PendingApproval, answers: ApprovalAnswers, options: Pick<AgentLoopOptions, 'tools' | 'toolOutputBudget' | 'signal' | 'onEvent'>): Promise<void> {
  const yes = answerMap(answers);
  const gated = pendingDecisions(pending);
  const decisions = new Map<string, CallDecision>();
  for (const [id, decided] of gated) decisions.set(id, decided === 'ask' ? (yes.get(id) === true ? 'allow' : 'deny') : decided);
  countPersonAnswers(gated, yes);
  await runCalls(pending.calls, decisions, messages, options, 'by the person asked to approve it', gated);
}

/**
 * A paused batch's decisions as a Map, read only from the object's own
 * properties. A call whose id is not unique in the batch, or that has no
 * decision, is refused: a batch saved before ids were made unique may hold
 * two calls under one decision, and neither was decided on its own.
 */
export function pendingDecisions(pending: PendingApproval): Map<string, CallDecision> {
  const count = new Map<string, number>();
  for (const call of pending.calls) count.set(call.id, (count.get(call.id) ?? 0) + 1);
  const decisions = new Map<string, CallDecision>();
  for (const call of pending.calls) {
    const own = typeof call.id === 'string' ? ownValue(pending.decisions, call.id) : undefined;
    decisions.set(call.id, count.get(call.id) === 1 && own ? own : 'deny');
  }
  return decisions;
}

/** The calls of a paused batch that wait for a person. */
export function waitingCalls(pending: PendingApproval): ToolCall[] {
  const decisions = pendingDecisions(pending);
  return pending.calls.filter((call) => decisions.get(call.id) === 'ask');
}

function answerMap(answers: ApprovalAnswers): ReadonlyMap<string, boolean> {
  return answers instanceof Map ? answers : new Map(Object.entries(answers));
}

async function loop(messages: ChatMessage[], options: AgentLoopOptions): Promise<AgentOutcome> {
  const maxIterations = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  let lastText = '';
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    // The tools as they are now: one forged in the previous step is offered, and gated, like any other.
    const byName = new Map(options.tools.list().map((s) => [s.name, s]));
    let streamed = false;
    // A model client sends as much of the conversation as each of its models takes (context-window.ts).
    const response = await options.model.complete({
      system: options.system,
      messages,
      tools: [...byName.values()].map((s) => ({ name: s.name, description: s.description, inputSchema: s.inputSchema })),
      maxTokens: options.maxTokens,
      temperature: options.temperature,
      signal: options.signal,
      conversation: options.conversation,
      task: options.task,
      // Always a stream from the provider, shown or not: a long answer to a turn that shows nothing (a schedule's) is not cut off.
      stream: true,
      onText: options.stream ? (delta) => ((streamed = true), options.onEvent?.({ type: 'text', delta })) : undefined,
    });
    // Not streamed, or a provider that answered a streaming request with JSON: the text is shown whole, once.
    if (!streamed && response.text) options.onEvent?.({ type: 'text', delta: response.text });
    lastText = response.text;
    const calls = normalizeCallIds(response.toolCalls, messages);
    // A thinking model's reasoning goes with its calls (DeepSeek and Kimi refuse calls sent back without it); without calls it is not needed.
    messages.push({ role: 'assistant', content: response.text, ...(calls.length ? { toolCalls: calls, ...(response.reasoning ? { reasoning: { model: response.model, ...response.reasoning } } : {}) } : {}) });
    const early = endedEarly(response.stopReason);
    if (calls.length === 0) return early ? { status: 'completed', text: `${response.text ? `${response.text}\n\n` : ''}${EARLY_NOTES[early]}`, endedEarly: early } : { status: 'completed', text: response.text };

    const decisions = new Map<string, CallDecision>();
    for (const call of calls) {
      if (unparsedArguments(call.arguments) !== undefined) {
        // The output limit cuts the answer's end: only its last call was cut; an earlier one was written wrong.
        decisions.set(call.id, early === 'cut-off' && call === calls.at(-1) ? 'cut-off' : 'malformed');
        continue;
      }
      // A tool this turn did not list may exist by now (forged on another replica): the gate decides on it like on the others.
      if (!byName.has(call.name) && options.tools.resolve) {
        const found = await options.tools.resolve(call.name);
        if (found) byName.set(call.name, found);
      }
      const spec = byName.get(call.name);
      // An unknown name is not the gate's business: it is refused as unknown when it runs.
      decisions.set(call.id, spec ? options.gate.decide(spec, call.arguments) : 'unknown');
    }
    countGateDecisions(decisions);
    const waiting = calls.filter((c) => decisions.get(c.id) === 'ask');
    if (waiting.length) {
      const requests = waiting.map((call) => {
        const spec = byName.get(call.name)!;
        return { callId: call.id, tool: call.name, arguments: call.arguments, reason: reasonFor(spec, options.gate.covers?.(spec) ?? []) };
      });
      options.onEvent?.({ type: 'approval-needed', requests });
      return { status: 'input-required', pending: { calls, decisions: Object.fromEntries(decisions) }, requests };
    }
    await runCalls(calls, decisions, messages, options, 'by the approval policy');
  }
  return { status: 'max-iterations', text: `${lastText ? `${lastText}\n\n` : ''}[stopped: the agent reached max_iterations (${maxIterations}) before finishing]` };
}

/** Ids as providers write them (OpenAI call_…, Anthropic toolu_…, vLLM chatcmpl-tool-…); Anthropic accepts no other characters. */
const SAFE_CALL_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Gives every call of one answer an id of its own. The loop keys its
 * decisions and the person's answers by call id, and the model chooses the
 * ids: two calls sharing one would share one decision (a write riding on a
 * read's "allow"), a missing id collides with every other missing one, and
 * "__proto__" vanishes from a plain object. The model's id is kept when it is
 * a safe string not used before in the conversation; otherwise the call gets
 * a fresh one. The conversation keeps the id the loop chose, in the call and
 * in its result, so the provider sees the two match.
 */
export function normalizeCallIds(calls: readonly ToolCall[], history: readonly ChatMessage[]): ToolCall[] {
  const used = new Set<string>();
  for (const m of history) if (m.role === 'assistant') for (const c of m.toolCalls ?? []) used.add(c.id);
  return calls.map((call) => {
    const id: unknown = call.id;
    const keep = typeof id === 'string' && SAFE_CALL_ID.test(id) && !(id in Object.prototype) && !used.has(id);
    const fresh = keep ? id : `forge_${randomUUID().replaceAll('-', '')}`;
    used.add(fresh);
    return fresh === id ? call : { ...call, id: fresh };
  });
}

async function runCalls(calls: ToolCall[], decisions: ReadonlyMap<string, CallDecision>, messages: ChatMessage[], options: Pick<AgentLoopOptions, 'tools' | 'toolOutputBudget' | 'signal' | 'onEvent'>, deniedBy: string, gated = decisions) {
  const budget = options.toolOutputBudget ?? DEFAULT_TOOL_OUTPUT_BUDGET;
  // A name the model made up is counted as an unknown tool, not under its own label.
  const offered = options.tools.list();
  const registered = new Set(offered.map((spec) => spec.name));
  // This conversation's own forged tools: counted, by no name (metrics may be public).
  const ownTools = new Set(offered.filter(isSessionTool).map((spec) => spec.name));
  // Each call listens to the turn's signal while it runs (the registry removes its listener when
  // the call ends): an answer of 11 calls or more is no leak, and Node's warning of one would say it
  // was. Raised by the answer's calls over the default, not over what is on it now, so listeners
  // left behind from call to call would still be warned of.
  const { signal } = options;
  if (signal) setMaxListeners(Math.max(getMaxListeners(signal), defaultMaxListeners + calls.length), signal);
  const results = await Promise.all(
    calls.map(async (call): Promise<ToolResult> => {
      options.onEvent?.({ type: 'tool-call', call });
      // No decision (a call the loop did not decide) is a refusal, never a run.
      const decision = decisions.get(call.id) ?? 'deny';
      const asked = gated.get(call.id);
      const result: ToolResult = await traceToolCall({ name: call.name, registered: decision !== 'unknown' && registered.has(call.name), sessionTool: ownTools.has(call.name), callId: call.id, decision: asked, answer: asked === 'ask' ? decision : undefined, frontend: 'agent' }, call.arguments, async () => {
        if (decision === 'deny') return { ok: false, error: { code: 'FORGE_APPROVAL_DENIED', message: `the call to "${call.name}" was denied ${deniedBy}`, hint: 'do not retry it; continue without it or ask the user' } };
        if (decision === 'unknown') return notOffered(call.name, options.tools);
        if (decision === 'malformed' || decision === 'cut-off') return unparsed(call, decision);
        return options.tools.execute(call.name, call.arguments, { signal: options.signal, instrumented: true });
      });
      options.onEvent?.({ type: 'tool-result', call, result });
      return result;
    }),
  );
  calls.forEach((call, i) => {
    const { text, isError, form } = toolResultText(results[i], budget);
    messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: text, ...(isError ? { isError } : {}), ...(form ? { form } : {}) });
  });
}

/**
 * A call to a name no tool had when the loop decided it. It never reaches
 * the registry: a tool of that name may exist by now (forged by a call of
 * the same answer, running beside it), and the registry would run it as
 * approved although the gate never saw it.
 */
function notOffered(name: string, tools: AgentTools): ToolResult {
  const names = tools.list().map((spec) => spec.name);
  if (names.includes(name)) return fail('FORGE_TOOL_UNKNOWN', `no tool named "${name}" existed when the model called it`, 'it exists now: call it again');
  return unknownTool(name, names);
}

/** The note a completed turn's text ends with when the provider ended the answer. */
const EARLY_NOTES = {
  'cut-off': "[cut off: the answer reached the model's output token limit; raise model.max_tokens in forge.yaml]",
  filtered: "[stopped: the model's provider ended the answer (its content filter or a refusal)]",
};

/** A call whose arguments are not JSON: never run (nor put to a person), the model told why and shown what it sent. */
function unparsed(call: ToolCall, why: 'malformed' | 'cut-off'): ToolResult {
  const raw = unparsedArguments(call.arguments)!;
  const shown = raw.length > 200 ? `${raw.slice(0, 200)}…` : raw;
  return why === 'cut-off'
    ? fail('FORGE_TOOL_ARGS', `the arguments of this call to "${call.name}" were cut off at the output token limit, so it did not run (${raw.length} characters arrived: ${shown})`, 'send less in one call: split the work into several smaller calls (write a long file in parts)')
    : fail('FORGE_TOOL_ARGS', `the arguments of this call to "${call.name}" are not JSON, so it did not run: ${shown}`, 'send the arguments as one JSON object, as the tool\'s input schema describes');
}

/**
 * Why a person must decide. A singleConfirmation tool's one approval also approves what it calls (the
 * calls run without asking again, their arguments made by its steps): said, since the tool's own tags
 * (it may be tagged read) would not tell the person that "yes" lets writes run.
 */
function reasonFor(spec: ToolSpec, covers: readonly string[]): string {
  const security = spec.tags.filter((t) => t === 'read' || t === 'write' || t === 'run');
  const own = security.length ? `"${spec.name}" is tagged ${security.join(', ')}` : `"${spec.name}" has no security tag, so it counts as run`;
  return covers.length ? `${own}; approving it also approves every call it makes to ${covers.join(', ')}` : own;
}
