/**
 * The agent: conversations (one per context id) with the model and the
 * tools, under the approval gate. Front ends — A2A, `forge chat` — call
 * send() and resume(); one turn runs at a time per context, across every
 * process sharing the conversation store.
 */
import type { AgentManifest } from '../manifest.ts';
import { allowAllGate, type ApprovalGate } from './approval-gate.ts';
import { resumeAgentTurn, runAgentTurn, settlePending, waitingCalls, type AgentEvent, type AgentOutcome, type AgentTools, type ApprovalAnswers, type PendingApproval } from './agent-loop.ts';
import type { ChatMessage, ModelProvider } from './messages.ts';
import type { ConversationStore, Session } from '../state/store.ts';
import { conversationSession } from '../state/session-owners.ts';
import { sessionView } from '../tools/emergent/session-view.ts';
import { traceTurn } from '../telemetry/instrument-turn.ts';
import { ForgeError } from '../diagnostics.ts';

export class NoModelError extends ForgeError {
  constructor() {
    super('FORGE_NO_MODEL', 'no model configured: add a `model:` section (provider and name) to forge.yaml and rebuild');
  }
}

/** The model and how a turn uses it: forge.yaml's `model:`. */
export interface AgentModel {
  model?: ModelProvider;
  maxIterations?: number;
  maxTokens?: number;
  temperature?: number;
}

export interface AgentOptions extends AgentModel {
  manifest: Pick<AgentManifest, 'agent_id' | 'version' | 'description'> & { instructions?: string };
  tools: AgentTools;
  gate?: ApprovalGate;
  sessions: ConversationStore;
  /** The most messages a conversation keeps (default MAX_KEPT_MESSAGES). */
  maxKeptMessages?: number;
  /** The most characters of text and call arguments it keeps (default MAX_KEPT_CHARS). */
  maxKeptChars?: number;
}

/**
 * The most messages a conversation keeps, its latest. A conversation is saved whole at every turn and
 * a schedule's grows at every run (every 5 minutes is 35 MB of JSON rewritten at each run after a
 * month): past this, its earliest turns are dropped, as whole turns. Far more than a model is sent.
 */
export const MAX_KEPT_MESSAGES = 2000;

/**
 * The most characters of text and call arguments a conversation keeps, its latest: 2,000 messages of
 * 16,000-character tool results (the output budget) would be 32 MB saved at every turn. About two
 * million tokens: more than any model's context window takes.
 */
export const MAX_KEPT_CHARS = 8_000_000;

export interface TurnOptions {
  onEvent?: (event: AgentEvent) => void;
  stream?: boolean;
  signal?: AbortSignal;
  /** The A2A task the turn belongs to, remembered while it waits for approval. */
  taskId?: string;
}

export class Agent {
  private options: AgentOptions;

  constructor(options: AgentOptions) {
    this.options = { ...options };
  }

  /**
   * Another model from the next model call on (forge.yaml's `model:` saved
   * under `forge run --dev`) for every turn that starts from now on; a turn
   * already running finishes with the model it started with.
   */
  useModel(next: AgentModel): void {
    this.options = { ...this.options, model: next.model, maxIterations: next.maxIterations, maxTokens: next.maxTokens, temperature: next.temperature };
  }

  get hasModel(): boolean {
    return this.options.model !== undefined;
  }

  /** The approval a context is waiting for, if any. */
  async pending(contextId: string): Promise<Session['pending']> {
    return (await this.options.sessions.read(contextId)).pending;
  }

  /** The conversation as last saved: its messages and the approval it waits for. */
  conversation(contextId: string): Promise<Session> {
    return this.options.sessions.read(contextId);
  }

  send(contextId: string, text: string, turn: TurnOptions = {}): Promise<AgentOutcome> {
    return this.options.sessions.withTurn(contextId, async (session) => {
      const model = this.requireModel();
      return this.finish(
        session,
        async () => {
          // A new message while approval was pending means the person moved on: the paused
          // calls are refused (the model learns it with the new message, in one turn).
          if (session.pending) {
            const pending = session.pending;
            session.pending = undefined;
            await settlePending(session.messages, pending, {}, { tools: this.toolsFor(contextId) });
          }
          session.messages.push({ role: 'user', content: text });
          return traceTurn(this.options.manifest.agent_id, contextId, 'send', () => runAgentTurn(session.messages, this.loopOptions(model, turn, contextId)), turn.signal);
        },
        turn.taskId,
      );
    });
  }

  /** Continues a turn paused for approval; `answers` maps call ids to yes/no (missing ids count as no). */
  resume(contextId: string, answers: ApprovalAnswers, turn: TurnOptions = {}): Promise<AgentOutcome> {
    return this.options.sessions.withTurn(contextId, async (session) => {
      const model = this.requireModel();
      const pending = session.pending;
      if (!pending) throw new Error(`context "${contextId}" is not waiting for an approval`);
      session.pending = undefined;
      return this.finish(session, () => traceTurn(this.options.manifest.agent_id, contextId, 'resume', () => resumeAgentTurn(session.messages, pending, answers, this.loopOptions(model, turn, contextId)), turn.signal), turn.taskId);
    });
  }

  /**
   * Runs a turn, records it in the session if it paused, and keeps the conversation within its limit
   * (the store saves it when the turn ends) also when the turn fails: what a failed turn did stays, and
   * a schedule whose every run fails (a revoked key, a turn too long alone) would otherwise grow for good.
   */
  private async finish(session: Session, run: () => Promise<AgentOutcome>, taskId?: string): Promise<AgentOutcome> {
    try {
      const outcome = await run();
      if (outcome.status === 'input-required') session.pending = { ...outcome.pending, ...(taskId ? { taskId } : {}) };
      return outcome;
    } catch (err) {
      answerUnansweredCalls(session.messages);
      throw err;
    } finally {
      keepLatest(session.messages, this.options.maxKeptMessages ?? MAX_KEPT_MESSAGES, this.options.maxKeptChars ?? MAX_KEPT_CHARS, KEPT_AFTER_CUT);
    }
  }

  private requireModel(): ModelProvider {
    if (!this.options.model) throw new NoModelError();
    return this.options.model;
  }

  /** The tools one conversation sees: its own forged tools among them, and its calls carry its id. */
  private toolsFor(contextId: string): AgentTools {
    return sessionView(this.options.tools, conversationSession(contextId));
  }

  private loopOptions(model: ModelProvider, turn: TurnOptions, contextId: string) {
    const { manifest } = this.options;
    const system = [`You are ${manifest.agent_id} (version ${manifest.version}).`, manifest.description, manifest.instructions].filter(Boolean).join('\n\n');
    return {
      model,
      tools: this.toolsFor(contextId),
      gate: this.options.gate ?? allowAllGate,
      system,
      maxIterations: this.options.maxIterations,
      maxTokens: this.options.maxTokens,
      temperature: this.options.temperature,
      stream: turn.stream,
      signal: turn.signal,
      conversation: contextId,
      task: turn.taskId,
      onEvent: turn.onEvent,
    };
  }
}

/**
 * A turn that failed between the model's tool calls and their results (a tool lookup or the
 * store threw, a resumed batch failed to settle) left calls without results: both wire formats
 * refuse such a conversation, so every later turn of it would fail. Each gets a result saying so.
 */
export function answerUnansweredCalls(messages: ChatMessage[]): void {
  const at = messages.findLastIndex((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0);
  if (at < 0) return;
  const call = messages[at];
  if (call.role !== 'assistant') return;
  const answered = new Set(messages.slice(at + 1).flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
  const missing = (call.toolCalls ?? []).filter((c) => !answered.has(c.id));
  // Results go right after their calls' message and its other results: nothing else can come between.
  let insertAt = at + 1;
  while (insertAt < messages.length && messages[insertAt].role === 'tool') insertAt++;
  messages.splice(insertAt, 0, ...missing.map((c) => ({ role: 'tool' as const, toolCallId: c.id, name: c.name, content: 'FORGE_TOOL_CANCELLED: the turn failed before this call ran', isError: true })));
}

/**
 * Past a limit, a conversation keeps this share of it: dropping the earliest turn at every turn would
 * change the beginning of what is sent at every turn, and a provider's prompt cache would never serve it.
 */
export const KEPT_AFTER_CUT = 0.9;

/**
 * The earliest turns past `max` messages, or past `maxChars` characters of text and arguments, dropped
 * whole: the kept part starts with a user's message. Past either limit, `kept` (a share) of each is kept.
 */
export function keepLatest(messages: ChatMessage[], max: number, maxChars = MAX_KEPT_CHARS, kept = 1): void {
  const sizes = messages.map(charsOf);
  if (messages.length <= max && sizes.reduce((sum, size) => sum + size, 0) <= maxChars) return;
  const keptMessages = Math.floor(max * kept);
  const keptChars = Math.floor(maxChars * kept);
  let cut = Math.max(0, messages.length - keptMessages);
  for (let i = messages.length - 1, chars = 0; i >= cut; i--) {
    chars += sizes[i];
    if (chars > keptChars) {
      cut = i + 1;
      break;
    }
  }
  if (cut <= 0) return;
  while (cut < messages.length && messages[cut].role !== 'user') cut++;
  // The latest turn longer than the limit on its own (a user message and many tool calls) is kept whole, and only it.
  if (cut === messages.length) cut = messages.findLastIndex((m) => m.role === 'user');
  if (cut > 0) messages.splice(0, cut);
}

/** A message's size as kept: its text, its calls' arguments and reasoning (cheaper than its JSON, and close to it). */
function charsOf(message: ChatMessage): number {
  let chars = message.content.length;
  if (message.role !== 'assistant') return chars;
  for (const call of message.toolCalls ?? []) chars += call.name.length + (typeof call.arguments === 'string' ? call.arguments.length : JSON.stringify(call.arguments ?? null).length);
  return chars + (message.reasoning?.text.length ?? 0);
}

/**
 * A person's answer to an approval request: "approve"/"yes" or "deny"/"no"
 * for every waiting call, or `{ "approvals": { "<call id>": true } }` call
 * by call. Undefined when the answer says neither.
 */
export function parseApprovalAnswer(text: string, data: unknown, pending: PendingApproval): Map<string, boolean> | undefined {
  const waiting = waitingCalls(pending).map((c) => c.id);
  const all = (value: boolean) => new Map(waiting.map((id) => [id, value]));
  if (data && typeof data === 'object') {
    const d = data as { approvals?: Record<string, unknown>; approved?: unknown };
    if (typeof d.approved === 'boolean') return all(d.approved);
    // Only the object's own properties: an id never finds something its prototype has.
    const approvals = d.approvals;
    if (approvals && typeof approvals === 'object') return new Map(waiting.map((id) => [id, Object.hasOwn(approvals, id) && approvals[id] === true]));
  }
  if (/^\s*(approve[ds]?|yes|y|ok|allow(ed)?)\b/i.test(text)) return all(true);
  if (/^\s*(den(y|ied)|no|n|reject(ed)?|refuse[d]?)\b/i.test(text)) return all(false);
  return undefined;
}
