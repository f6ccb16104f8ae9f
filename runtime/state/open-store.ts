/**
 * Which state store a process uses: FORGE_STATE_URL, else forge.yaml's
 * `state:` (recorded in agent.json), else `file:`. `postgres://` (or
 * `postgresql://`) loads the Postgres store — and the `pg` client — only
 * then. FORGE_LEASE (e.g. 15s) is how long a turn's hold or a task's lease
 * outlives a replica that stopped renewing it; FORGE_TASK_RETENTION (e.g.
 * 30d, or off) how long Postgres keeps a finished task, and
 * FORGE_CONVERSATION_RETENTION (off unless set) how long either store keeps
 * a conversation.
 */
import { parseDuration } from '../duration.ts';
import type { Logger } from '../tools/model.ts';
import { createFileStore, type ForgedFiles } from './file-store.ts';
import { redact } from './shown-url.ts';
import { conversationRetentionFrom, taskRetentionFrom } from './retention-settings.ts';
import { StateUnavailableError } from '../store-unavailable.ts';
import { StateConfigError, type StateStore } from './store.ts';

export const DEFAULT_LEASE_MS = 15_000;

export interface StateSettings {
  workDir: string;
  env: NodeJS.ProcessEnv;
  /** forge.yaml's `state:`. */
  configured?: string;
  log?: Logger;
  /**
   * Whether this process runs the store's housekeeping sweeps (the retentions, and the bookkeeping they
   * keep bounded): the long-running server only (`serve`, `forge run`). A one-shot command (`forge tool
   * run`, `call`, `forge tool forged remove`) never does: it could take a tool's files away while the
   * server serves it, and is gone before an hourly sweep matters.
   */
  sweeps?: boolean;
  /** The work dir's forged tools, for the `file:` store to take a session's out as it ends (file-store.ts). */
  forgedFiles?: ForgedFiles;
}

/** The state URL in force (never printed whole: it may hold a password). */
export function stateUrl(settings: Pick<StateSettings, 'env' | 'configured'>): string {
  return settings.env.FORGE_STATE_URL?.trim() || settings.configured?.trim() || 'file:';
}

/** Whether the URL names a store replicas share (Postgres). */
export function isSharedStateUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

export async function openStateStore(settings: StateSettings): Promise<StateStore> {
  const url = stateUrl(settings);
  if (url === 'file:' || url === 'file') return createFileStore(settings.workDir, { conversationRetentionMs: conversationRetentionFrom(settings.env), sweeps: settings.sweeps, forgedFiles: settings.forgedFiles, log: settings.log });
  // A path is not taken: the store, its lock and the sandbox's hiding of it are all .forge/ in the work dir.
  // Taken silently, state meant for a mounted volume would be lost with the container.
  if (url.startsWith('file:')) {
    throw new StateConfigError(`the file: store keeps its state in .forge/ in the work dir, not at "${url.slice('file:'.length)}"`, 'write file: alone; to keep the state elsewhere (a volume), mount that folder at .forge/ in the work dir');
  }
  if (isSharedStateUrl(url)) {
    const leaseMs = leaseFrom(settings.env);
    const taskRetentionMs = taskRetentionFrom(settings.env);
    const conversationRetentionMs = conversationRetentionFrom(settings.env);
    const { openPostgresStore } = await import('./postgres-store.ts');
    try {
      return await openPostgresStore({ url, leaseMs, taskRetentionMs, conversationRetentionMs, sweeps: settings.sweeps, log: settings.log });
    } catch (err) {
      throw new StateConfigError(`cannot open the Postgres state store at ${redact(url)}: ${err instanceof StateUnavailableError ? err.reason : (err as Error).message}`, 'check FORGE_STATE_URL (postgres://user:password@host:5432/database) and that the server accepts connections');
    }
  }
  throw new StateConfigError(`unknown state store "${redact(url)}"`, 'use file: (the default, one process) or postgres://user:password@host:5432/database (replicas)');
}

/** FORGE_LEASE: how long a hold outlives a process that stopped renewing it. */
export function leaseFrom(env: NodeJS.ProcessEnv): number {
  const text = env.FORGE_LEASE?.trim();
  if (!text) return DEFAULT_LEASE_MS;
  const ms = parseDuration(text);
  if (ms === undefined || ms < 200) throw new StateConfigError(`FORGE_LEASE="${text}" is not a duration of at least 200ms`, 'write it with its unit, e.g. 15s');
  return ms;
}
