/**
 * One agent turn: send the conversation and the tool definitions to the
 * model, run the tool calls it asks for (all calls of one answer in
 * parallel — the model issued them together, so they are independent),
 * feed the results back, and repeat until the model answers without tool
 * calls or `maxIterations` is reached. Tool errors go back to the model as
 * results. A call the approval gate wants a person to decide pauses the
 * turn; `resumeAgentTurn` continues it with the person's answers.
 */
import type { ToolResult, ToolSpec } from '../tools/model.ts';
import type { ApprovalGate, GateDecision } from './approval-gate.ts';
import type { ChatMessage, ModelProvider, ToolCall, ToolDefinition } from './messages.ts';
import { DEFAULT_TOOL_OUTPUT_BUDGET, toolResultText } from './tool-output.ts';
import { traceToolCall } from '../telemetry/instrument-tools.ts';
import { countGateDecisions, countPersonAnswers } from '../telemetry/instrument-turn.ts';

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

/** A paused batch of tool calls: what the gate decided, and which calls wait for a person. */
export interface PendingApproval {
  calls: ToolCall[];
  decisions: Record<string, GateDecision>;
}

export type AgentOutcome =
  | { status: 'completed'; text: string }
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
  onEvent?: (event: AgentEvent) => void;
}

/** Runs a turn on `messages` (which end with the user's message); appends everything it adds. */
export async function runAgentTurn(messages: ChatMessage[], options: AgentLoopOptions): Promise<AgentOutcome> {
  return loop(messages, options);
}

/** Continues a paused turn: `answers` maps each waiting call id to the person's yes or no. */
export async function resumeAgentTurn(messages: ChatMessage[], pending: PendingApproval, answers: Record<string, boolean>, options: AgentLoopOptions): Promise<AgentOutcome> {
  await settlePending(messages, pending, answers, options);
  return loop(messages, options);
}

/**
 * Runs a paused batch with the person's answers (a call without one is
 * refused) and records the results, without asking the model anything: the
 * conversation is whole again, ready for a new message or for the model.
 */
export async function settlePending(messages: ChatMessage[], pending: PendingApproval, answers: Record<string, boolean>, options: Pick<AgentLoopOptions, 'tools' | 'toolOutputBudget' | 'signal' | 'onEvent'>): Promise<void> {
  const decisions: Record<string, GateDecision> = {};
  for (const call of pending.calls) {
    const decided = pending.decisions[call.id];
    decisions[call.id] = decided === 'ask' ? (answers[call.id] ? 'allow' : 'deny') : decided;
  }
  countPersonAnswers(pending.decisions, answers);
  await runCalls(pending.calls, decisions, messages, options, 'by the person asked to approve it', pending.decisions);
}

async function loop(messages: ChatMessage[], options: AgentLoopOptions): Promise<AgentOutcome> {
  const maxIterations = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  const specs = options.tools.list();
  const byName = new Map(specs.map((s) => [s.name, s]));
  const definitions: ToolDefinition[] = specs.map((s) => ({ name: s.name, description: s.description, inputSchema: s.inputSchema }));
  let lastText = '';
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    const response = await options.model.complete({
      system: options.system,
      messages,
      tools: definitions,
      maxTokens: options.maxTokens,
      temperature: options.temperature,
      signal: options.signal,
      onText: options.stream ? (delta) => options.onEvent?.({ type: 'text', delta }) : undefined,
    });
    if (!options.stream && response.text) options.onEvent?.({ type: 'text', delta: response.text });
    lastText = response.text;
    messages.push({ role: 'assistant', content: response.text, ...(response.toolCalls.length ? { toolCalls: response.toolCalls } : {}) });
    if (response.toolCalls.length === 0) return { status: 'completed', text: response.text };

    const decisions: Record<string, GateDecision> = {};
    for (const call of response.toolCalls) {
      // A tool this turn did not list may exist by now (forged on another replica): the gate decides on it like on the others.
      if (!byName.has(call.name) && options.tools.resolve) {
        const found = await options.tools.resolve(call.name);
        if (found) byName.set(call.name, found);
      }
      const spec = byName.get(call.name);
      // An unknown tool is not the gate's business: the registry answers it with an error.
      decisions[call.id] = spec ? options.gate.decide(spec, call.arguments) : 'allow';
    }
    countGateDecisions(decisions);
    const waiting = response.toolCalls.filter((c) => decisions[c.id] === 'ask');
    if (waiting.length) {
      const requests = waiting.map((call) => ({ callId: call.id, tool: call.name, arguments: call.arguments, reason: reasonFor(byName.get(call.name)!) }));
      options.onEvent?.({ type: 'approval-needed', requests });
      return { status: 'input-required', pending: { calls: response.toolCalls, decisions }, requests };
    }
    await runCalls(response.toolCalls, decisions, messages, options, 'by the approval policy');
  }
  return { status: 'max-iterations', text: `${lastText ? `${lastText}\n\n` : ''}[stopped: the agent reached max_iterations (${maxIterations}) before finishing]` };
}

async function runCalls(calls: ToolCall[], decisions: Record<string, GateDecision>, messages: ChatMessage[], options: Pick<AgentLoopOptions, 'tools' | 'toolOutputBudget' | 'signal' | 'onEvent'>, deniedBy: string, gated = decisions) {
  const budget = options.toolOutputBudget ?? DEFAULT_TOOL_OUTPUT_BUDGET;
  // A name the model made up is counted as an unknown tool, not under its own label.
  const registered = new Set(options.tools.list().map((spec) => spec.name));
  const results = await Promise.all(
    calls.map(async (call): Promise<ToolResult> => {
      options.onEvent?.({ type: 'tool-call', call });
      const result: ToolResult = await traceToolCall({ name: call.name, registered: registered.has(call.name), callId: call.id, decision: gated[call.id], answer: gated[call.id] === 'ask' ? decisions[call.id] : undefined, frontend: 'agent' }, call.arguments, async () =>
        decisions[call.id] === 'deny'
          ? { ok: false, error: { code: 'FORGE_APPROVAL_DENIED', message: `the call to "${call.name}" was denied ${deniedBy}`, hint: 'do not retry it; continue without it or ask the user' } }
          : options.tools.execute(call.name, call.arguments, { signal: options.signal, instrumented: true }),
      );
      options.onEvent?.({ type: 'tool-result', call, result });
      return result;
    }),
  );
  calls.forEach((call, i) => {
    const { text, isError } = toolResultText(results[i], budget);
    messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: text, ...(isError ? { isError } : {}) });
  });
}

function reasonFor(spec: ToolSpec): string {
  const security = spec.tags.filter((t) => t === 'read' || t === 'write' || t === 'run');
  return security.length ? `"${spec.name}" is tagged ${security.join(', ')}` : `"${spec.name}" has no security tag, so it counts as run`;
}
