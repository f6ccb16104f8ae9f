/**
 * Runs the agent for A2A tasks. Each message in a context continues that
 * context's conversation. Text streams out as artifact chunks; tool calls
 * and results show as `working` status updates; a call that needs a
 * person's approval ends the request in `input-required`, and the next
 * message on the same task (approve / deny, or a data part
 * `{ "approvals": { "<call id>": true } }`) resumes it — on any replica:
 * the paused turn and the task are in the state store.
 *
 * A running task holds a lease in the store (a replica that dies lets it
 * expire, and the task is failed by another); a cancel request reaches the
 * replica running the turn through the store's cancel channel; at shutdown,
 * turns still running when the grace period ends are failed, not left working.
 * A turn that loses the state store once under way ends failed, and tells the
 * request (noteStoreAway) so that its client is answered FORGE_STATE_UNAVAILABLE.
 */
import { redactSecrets } from '../../known-secrets.ts';
import type { Logger } from '../../tools/model.ts';
import { AgentEvent } from '../../vendor/a2a.ts';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { TaskState } from '../../vendor/a2a.ts';
import type { Task } from '@a2a-js/sdk';
import { parseApprovalAnswer, type Agent } from '../../agent/agent.ts';
import type { AgentEvent as LoopEvent } from '../../agent/agent-loop.ts';
import type { TaskLease, TaskRecords } from '../../state/store.ts';
import { StateUnavailableError } from '../../store-unavailable.ts';
import { agentMessage, dataPart, messageForModel, readMessage, statusEvent, textPart } from './a2a-messages.ts';
import { TextChunks } from './text-chunks.ts';
import type { TurnLimit } from './turn-limit.ts';

/** The reason a turn is aborted with when the process stops before it finished. */
export const SHUTDOWN = Symbol('shutdown');
/** The reason a turn is aborted with when its task's lease was reaped (this process could not reach the store): another process failed the task. */
const LEASE_LOST = Symbol('lease lost');

export class ForgeAgentExecutor implements AgentExecutor {
  private readonly running = new Map<string, AbortController>();

  constructor(
    private readonly agent: Agent,
    /** Where leases are held (absent: no leases, e.g. in tests of the executor alone). */
    private readonly tasks?: Pick<TaskRecords, 'hold'>,
    /**
     * Told of a turn that failed because the state store went away (its lease, its conversation): the
     * task ends failed either way, which the SDK answers as a result; this lets the request's answer be
     * FORGE_STATE_UNAVAILABLE instead (A2AStoreGuard.note, by the request's call context).
     */
    private readonly noteStoreAway?: (context: object, err: StateUnavailableError) => void,
    /** Counts the turns running or waiting for their conversation in this process (FORGE_MAX_TURNS). */
    private readonly turns?: Pick<TurnLimit, 'started' | 'ended'>,
    /** Where a turn that ends failed is said, with its task and context: the task's status alone reaches only its client. */
    private readonly log?: Pick<Logger, 'warn'>,
  ) {}

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const controller = this.running.get(taskId);
    if (controller) controller.abort();
    else bus.publish(AgentEvent.statusUpdate(statusEvent(taskId, '', TaskState.TASK_STATE_CANCELED)));
  };

  /** A cancel request from any replica: aborts the turn if it runs here (says whether it did). */
  cancelHere(taskId: string): boolean {
    const controller = this.running.get(taskId);
    controller?.abort();
    return controller !== undefined;
  }

  /** The tasks whose turns run in this process now. */
  runningTasks(): string[] {
    return [...this.running.keys()];
  }

  /** Aborts every running turn as the process stops; each ends failed. */
  abortAll(): void {
    for (const controller of this.running.values()) controller.abort(SHUTDOWN);
  }

  async execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = request;
    const message = request.userMessage;
    const existing = request.task;
    const task: Task = existing
      ? { ...existing, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() } }
      : { id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [message], metadata: undefined };
    bus.publish(AgentEvent.task(task));
    bus.publish(AgentEvent.statusUpdate(statusEvent(taskId, contextId, TaskState.TASK_STATE_WORKING)));

    const controller = new AbortController();
    this.running.set(taskId, controller);
    this.turns?.started(request.context);
    let lease: TaskLease | undefined;
    /** The state the turn ends in, published last: the lease is let go once it is saved. */
    let lastState: TaskState | undefined;
    const publishLast = (state: TaskState, parts: Parameters<typeof agentMessage>[2]) => {
      chunks.flush();
      lastState = state;
      bus.publish(AgentEvent.statusUpdate(statusEvent(taskId, contextId, state, agentMessage(taskId, contextId, parts))));
    };
    const artifactId = `answer-${message.messageId || taskId}`;
    let streamed = false;
    // The model's pieces go out gathered in chunks (text-chunks.ts: the SDK saves the whole task at each one).
    const chunks = new TextChunks((text) => {
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: { artifactId, name: 'answer', description: '', parts: [textPart(text)], metadata: undefined, extensions: [] }, append: streamed, lastChunk: false, metadata: undefined }));
      streamed = true;
    });
    const onEvent = (event: LoopEvent) => {
      switch (event.type) {
        case 'text':
          chunks.add(event.delta);
          break;
        case 'tool-call':
          chunks.flush();
          bus.publish(AgentEvent.statusUpdate(statusEvent(taskId, contextId, TaskState.TASK_STATE_WORKING, agentMessage(taskId, contextId, [textPart(`calling ${event.call.name}`), dataPart({ toolCall: { id: event.call.id, name: event.call.name, arguments: event.call.arguments } })]))));
          break;
        case 'tool-result':
          chunks.flush();
          bus.publish(AgentEvent.statusUpdate(statusEvent(taskId, contextId, TaskState.TASK_STATE_WORKING, agentMessage(taskId, contextId, [textPart(`${event.call.name} ${event.result.ok ? 'returned' : 'failed'}`), dataPart({ toolResult: { id: event.call.id, name: event.call.name, ok: event.result.ok, ...(event.result.ok ? {} : { error: event.result.error }) } })]))));
          break;
        case 'approval-needed':
          break; // reported with the final status below
      }
    };

    try {
      lease = await this.tasks?.hold(taskId, () => controller.abort(LEASE_LOST));
      const { text, data } = readMessage(message);
      const pending = await this.agent.pending(contextId);
      const turn = { onEvent, stream: true, signal: controller.signal, taskId };
      let outcome;
      if (pending && (!pending.taskId || pending.taskId === taskId)) {
        const answers = parseApprovalAnswer(text, data, pending);
        if (!answers) {
          publishLast(TaskState.TASK_STATE_INPUT_REQUIRED, [textPart('Please answer "approve" or "deny" (or send {"approvals": {"<call id>": true|false}}).')]);
          return;
        }
        outcome = await this.agent.resume(contextId, answers, turn);
      } else {
        const asked = messageForModel(message);
        // Nothing for the model to read (no parts, blank text): refused, not sent as an empty message (which Anthropic refuses).
        if (!asked.trim()) {
          publishLast(TaskState.TASK_STATE_REJECTED, [textPart('the message has no text to act on: send the task as a text part (or a data or file part)')]);
          return;
        }
        outcome = await this.agent.send(contextId, asked, turn);
      }

      if (outcome.status === 'input-required') {
        const lines = outcome.requests.map((r) => `- ${r.tool} ${JSON.stringify(r.arguments)} (${r.reason})`);
        const prompt = `Approval needed before running:\n${lines.join('\n')}\nReply "approve" or "deny".`;
        publishLast(TaskState.TASK_STATE_INPUT_REQUIRED, [textPart(prompt), dataPart({ approvals: outcome.requests })]);
        return;
      }
      // The whole answer replaces the streamed chunks: one clean part in the stored task.
      chunks.flush();
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: { artifactId, name: 'answer', description: '', parts: [textPart(outcome.text)], metadata: undefined, extensions: [] }, append: false, lastChunk: true, metadata: undefined }));
      publishLast(TaskState.TASK_STATE_COMPLETED, [textPart(outcome.text)]);
    } catch (err) {
      const shutdown = controller.signal.reason === SHUTDOWN;
      const leaseLost = controller.signal.reason === LEASE_LOST;
      const cancelled = controller.signal.aborted && !shutdown && !leaseLost;
      // The store's own class only: a tool's failure never throws here (it is a result to the model).
      const storeAway = !controller.signal.aborted && err instanceof StateUnavailableError;
      // Noted before the last state is published: the SDK answers the request once that is saved (or kept).
      if (storeAway) this.noteStoreAway?.(request.context, err);
      const state = cancelled ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_FAILED;
      const text = shutdown
        ? 'the agent stopped before the task finished; send it again'
        : leaseLost
          ? 'the replica running this task lost its connection to the state store, and the task was given up; send it again'
          : cancelled
            ? 'cancelled'
            : storeAway
              ? // The driver's line ("read ECONNRESET") is for the log (the request's warning), not the task.
                'the state store could not be reached during this turn; send it again'
              : redactSecrets((err as Error).message);
      // The store's absence is said by the request's own warning (A2AStoreGuard); a cancel is the client's wish.
      if (state === TaskState.TASK_STATE_FAILED && !storeAway) this.log?.warn(`task ${taskId} (context ${contextId}) failed: ${text}`);
      publishLast(state, [textPart(text)]);
    } finally {
      chunks.stop();
      this.turns?.ended();
      this.running.delete(taskId);
      await lease?.release(lastState).catch(() => {});
    }
  }
}
