/**
 * The state a running agent keeps between requests — conversations, A2A
 * tasks, schedules, files — behind one interface with two implementations:
 * `file:` (the default: one process, files under .forge/ in the work dir)
 * and `postgres://` (many replicas behind a load balancer share it). Every
 * part of the runtime that remembers something goes through a StateStore,
 * so any replica can serve any request.
 */
import type { PushNotificationStore, ServerCallContext, StoredPushNotificationConfig, TaskStore } from '@a2a-js/sdk/server';
import type { Task, TaskPushNotificationConfig, TaskState } from '@a2a-js/sdk';
import type { PendingApproval } from '../agent/agent-loop.ts';
import type { ChatMessage } from '../agent/messages.ts';
import type { Schedule } from '../scheduler/schedule-expression.ts';
import type { FiringRecord, ScheduledTask } from '../scheduler/scheduled-task.ts';
import type { ForgedRecord } from '../tools/emergent/forged-store.ts';
import { ForgeError } from '../diagnostics.ts';

export interface Session {
  id: string;
  messages: ChatMessage[];
  /** A turn paused for a person's approval. */
  pending?: PendingApproval & { taskId?: string };
}

export interface ConversationStore {
  /** The conversation as last saved (empty when new). */
  read(id: string): Promise<Session>;
  /**
   * Runs `work` holding the conversation's turn — one turn at a time per
   * conversation, across every process sharing the store — and saves the
   * session it leaves (compare-and-swap on the version read, so a turn that
   * lost its hold cannot overwrite a newer one).
   */
  withTurn<T>(id: string, work: (session: Session) => Promise<T>): Promise<T>;
}

/** A held lease on a running task: renewed until released; a holder that dies lets it expire. */
export interface TaskLease {
  /** `lastState`: the state the turn ended in; the lease is let go once it is saved (or after a few seconds). */
  release(lastState?: TaskState): Promise<void>;
}

export interface TaskRecords extends TaskStore {
  /**
   * Marks the task as running here until release (renewed in the background). `onLost` is told when a
   * renewal finds the lease gone: it expired while this process could not reach the store, and another
   * process gave the task up (failed it). Its turn should stop.
   */
  hold(taskId: string, onLost?: () => void): Promise<TaskLease>;
  /** Marks an unfinished task failed (a finished or paused one is left as it is); says whether it did. */
  fail(taskId: string, reason: string): Promise<boolean>;
}

/**
 * Where clients' push notification configs (A2A webhooks) live: beside the
 * tasks, so that whichever process runs a task finds its webhooks, and no
 * longer than them: a task dropped (the `file:` store's limits, a row
 * deleted from forge_tasks) takes its configs with it. Each config is kept
 * with the protocol version it was set over (its notifications' body
 * follows that version).
 */
export interface PushConfigRecords extends PushNotificationStore {
  loadWithMetadata(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]>;
  /**
   * Saves `config` unless its task already has `max` others (one of the same
   * id is replaced): 'full' then. Counted and saved as one step, so
   * concurrent sets (through one replica or several) never pass the limit.
   * `existingTask`: the config is for a task the store holds (a set, not a
   * message starting one): 'no task' when the store no longer holds it,
   * checked as it saves, so that a config set while its task is dropped is
   * never kept without it.
   */
  saveWithin(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig, max: number, existingTask?: boolean): Promise<PushConfigSave>;
  /** Where each config's receipt of its task's final state is kept, across replicas and restarts (Postgres; absent with `file:`). */
  finals?: FinalDeliveries;
}

/** How many times a final state is tried again, from the store, before it is given up (30 s doubling, at most an hour apart: about seven hours in all). */
export const FINAL_STATE_TRIES = 12;

/**
 * A finished task's final state, sent to each of its webhooks at least once:
 * the replica that ran it may have stopped before its notification went, or
 * the webhook may have been down for all of the notification's tries. Each
 * config is marked once its webhook took the final state; the others are
 * claimed, a few at a time, by whichever replica looks next, and tried again.
 */
export interface FinalDeliveries {
  /** Nothing more is to be sent to the config of its task's final state: its webhook took it, or it is given up. */
  settle(taskId: string, configId: string): Promise<void>;
  /**
   * Up to `limit` configs of tasks that finished more than `graceMs` ago (the replica that ran the task has
   * had its tries) and were not settled, fewer than `maxTries` times claimed before; each claimed for
   * `retryMs` × 2^(its tries so far), at most an hour: no replica takes it again meanwhile.
   */
  claimUnsettled(limit: number, graceMs: number, retryMs: number, maxTries: number): Promise<UnsettledFinal[]>;
  /**
   * Whether the store holds the task in a final state: an update saying it is not finished is then out of
   * date wherever it waits (another replica may have sent, or claimed, the final state already).
   */
  finished(taskId: string): Promise<boolean>;
}

/** A config whose webhook has not taken its task's final state yet, with the task as it finished. */
export interface UnsettledFinal {
  taskId: string;
  config: TaskPushNotificationConfig;
  wireVersion: string;
  task: Task;
  /** Claims so far, this one included. */
  tries: number;
}

/** 'store full': the store holds as many tasks' configs as it keeps, all of tasks still running or paused (the `file:` store). */
export type PushConfigSave = 'saved' | 'full' | 'no task' | 'store full';

export interface CancelChannel {
  /** Asks whichever process runs the task to cancel it. */
  request(taskId: string): Promise<void>;
  /** Called with every cancel request (from any process); returns the unsubscribe. */
  subscribe(listener: (taskId: string) => void): () => void;
}

/** A schedule as the scheduler hands it to the store to find its due times. */
export interface ScheduleEntry {
  key: string;
  /** Changes when the expression or time zone change (the due time starts over). */
  signature: string;
  schedule: Schedule;
}

export interface ScheduleRecords {
  runtimeTasks(): Promise<ScheduledTask[]>;
  /** Adds or replaces a runtime task; a new one past `limit` is refused (checked atomically). */
  saveTask(task: Omit<ScheduledTask, 'source' | 'created_at' | 'updated_at'>, limit: number, now?: Date): Promise<{ created: boolean; task: ScheduledTask }>;
  deleteTask(id: string): Promise<boolean>;
  appendHistory(record: FiringRecord): Promise<void>;
  history(options?: { id?: string; limit?: number }): Promise<FiringRecord[]>;
  /**
   * The entries due at `now`, each due time claimed by exactly one caller
   * across every process sharing the store; the next due time is recorded.
   */
  claimDue(entries: readonly ScheduleEntry[], now: Date): Promise<{ key: string; scheduledFor: Date }[]>;
  /** When each entry is next due, as the store knows it. */
  nextDue(): Record<string, string | undefined>;
}

export interface StoredFile {
  id: string;
  name: string;
  mediaType: string;
  content: Buffer;
}

export interface FileRecords {
  put(file: Omit<StoredFile, 'id'>): Promise<string>;
  get(id: string): Promise<StoredFile | undefined>;
}

/**
 * Tools forged at run time, shared by the replicas: each one's record as
 * forge_tool wrote it after build, test and judge. Only a shared store has
 * them; with `file:` the work dir's .forge/forged/ is the store.
 */
export type ForgedChange = { seq: number; record: ForgedRecord } | { seq: number; removed: ForgedRemoval } | ForgedPruned;

/**
 * First of the changes when removals after the seq asked from were pruned (kept a day): what follows is
 * every record the store holds, from seq 0; a tool the caller took from the store and that is not among them
 * was removed.
 */
export interface ForgedPruned {
  seq: 0;
  pruned: true;
}

/** A forged tool taken away: the forge of that name made at that time (a newer forge of the name stays). */
export interface ForgedRemoval {
  name: string;
  forgedAt: string;
}

export interface ForgedRecords {
  /**
   * Adds a record unless its name is taken or it would pass `maxTools`
   * (for the agent, or for its owner session): the refusal then.
   * Checked in the transaction that adds it; every process is told.
   */
  add(record: ForgedRecord, maxTools: number): Promise<{ code: 'FORGE_TOOL_COLLISION' | 'FORGE_FORGE_QUOTA'; message: string } | undefined>;
  /**
   * What changed after `seq` (0: everything), oldest first, each with the seq to ask from next:
   * records added, and records removed (every process drops the tool of that name and forgedAt).
   */
  since(seq: number): Promise<ForgedChange[]>;
  /** Removes the record of `name` for every process (`forge tool forged remove`, `forge tool promote`); false when there is none. */
  remove(name: string): Promise<boolean>;
  /** Called when any process added a record, and whenever records may have been added unheard (a notification connection back after a drop); returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
  /** Counts a forge_tool call of `session` (a sliding minute, across processes); the refusal's message past `perMinute`. */
  takeCall(session: string, perMinute: number): Promise<string | undefined>;
}

export interface StateStore {
  readonly kind: 'file' | 'postgres';
  /** True when other processes may share this store (replicas). */
  readonly shared: boolean;
  /** Where it keeps the state, as a start-up line says it: a directory, or the URL without its password. */
  readonly where: string;
  /** This process among those sharing the store. */
  readonly replicaId: string;
  conversations: ConversationStore;
  tasks: TaskRecords;
  /** The tasks' push notification configs. */
  pushConfigs: PushConfigRecords;
  cancels: CancelChannel;
  schedules: ScheduleRecords;
  files: FileRecords;
  /** Forged tools, where replicas share them (absent with `file:`). */
  forged?: ForgedRecords;
  /**
   * `file:` only: tells `listener` of the forged tools the store took out of the work dir's .forge/forged/ (a
   * session-tier tool goes with its conversation, FORGE_CONVERSATION_RETENTION, or its MCP session), so this process stops serving
   * them; returns the unsubscribe. A shared store takes them out of `forged`, whose removals every replica follows.
   */
  onForgedRemoved?(listener: (removed: ForgedRemoval[]) => void): () => void;
  /**
   * Removes the session-tier tools these sessions forged (an MCP session that ended) for every process
   * serving them: `file:` takes them out of .forge/forged/ and tells onForgedRemoved's listeners; a shared
   * store takes them out of `forged`, as its retention does a deleted conversation's. Resolves with how many.
   */
  removeSessionTools(owners: string[]): Promise<number>;
  /** Throws when the store cannot be reached (for /readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A save that lost a compare-and-swap: someone else wrote the conversation first. */
export class StateConflictError extends ForgeError {
  constructor(message: string) {
    super('FORGE_STATE_CONFLICT', message);
  }
}

/** A ForgeError: the CLI and the bundle print its code and hint, not a stack. */
export class StateConfigError extends ForgeError {
  constructor(message: string, hint?: string) {
    super('FORGE_STATE_CONFIG', message, hint);
  }
}
