/**
 * Forged tools from a state store the replicas share: every replica
 * registers what any of them forged — at start, when told (LISTEN/NOTIFY),
 * when the LISTEN connection is back after a drop (what was announced
 * meanwhile is lost), again after a look that failed, and before a call
 * names a tool this process does not have (a notification can come after
 * that call). Who sees a tool is still its tier (session-view.ts): a session
 * tool is registered everywhere and shown to its own session only, as on
 * the replica that forged it.
 *
 * What is registered is the record forge_tool wrote after build, test and
 * judge; one that is not approved with every test passed is refused here
 * too. Its code is written to this work dir's .forge/forged/ (the one file
 * its sandbox may read), like a tool forged here.
 *
 * With the `file:` store, which this process alone serves, what it follows is
 * the tools the store takes out itself: a session-tier tool whose conversation
 * the retention deleted, or whose MCP session ended.
 */
import type { Logger } from '../model.ts';
import type { ToolRegistry } from '../registry.ts';
import type { ForgedRecords, StateStore } from '../../state/store.ts';
import type { ForgedRecord, ForgedStore } from './forged-store.ts';
import { CANDIDATE_OWNER, createForgedTool, isForged, type ForgedToolHost } from './forged-tool.ts';
import { forgedMark, roomProblem } from './register-step.ts';
import type { EmergentSettings } from './forge-request.ts';
import { notAllowed } from './emergent-policy.ts';

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;

export class ForgedSync {
  private records: ForgedRecords | undefined;
  private seq = 0;
  private unsubscribe: (() => void) | undefined;
  /** The store whose own removals (`file:`'s retention) this process follows, and the unsubscribe. */
  private removalsOf: StateStore | undefined;
  private stopRemovals: (() => void) | undefined;
  private running: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  /** The next look after a failed one (no notification may come to ask for it), and its wait, doubled each failure. */
  private retry: NodeJS.Timeout | undefined;
  private retryMs = 0;
  /** The forge (forgedAt) of each tool this process serves from the store: what a read anew (removals pruned) checks. */
  private readonly fromStore = new Map<string, string>();
  /** Settles when a look after the failed ones succeeds (or the store is let go). */
  private retried: { promise: Promise<void>; settle: () => void } | undefined;

  constructor(
    private readonly registry: ToolRegistry,
    private readonly local: ForgedStore,
    private readonly host: (name: string) => ForgedToolHost,
    private readonly log: Logger,
    /** forge.yaml's `emergent:` in force: what a synced tool may use, and max_tools. */
    private readonly settings: () => EmergentSettings,
  ) {}

  /** The shared records forge_tool writes to; undefined with a store only this process uses. */
  get shared(): ForgedRecords | undefined {
    return this.records;
  }

  /**
   * Follows `state` (the store serve uses): registers what it holds and what is added to it. Resolves
   * after the first look that succeeds (never rejects: failed ones are logged and tried again), which
   * serve waits for: until then this process serves what its own disk held, which may be a tool or a
   * version the store removed.
   */
  attach(state: StateStore | undefined): Promise<void> {
    this.followRemovals(state);
    const records = state?.shared ? state.forged : undefined;
    if (records === this.records) return Promise.resolve();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearTimeout(this.retry);
    this.retry = undefined;
    this.retryMs = 0;
    this.retried?.settle();
    this.retried = undefined;
    this.records = records;
    this.seq = 0;
    this.fromStore.clear();
    if (!records) return Promise.resolve();
    this.unsubscribe = records.subscribe(() => void this.lookOrRetry());
    return this.lookOrRetry();
  }

  /** Drops the tools `state` takes out itself (`file:`: a session tool gone with its conversation or its MCP session). */
  private followRemovals(state: StateStore | undefined): void {
    if (state === this.removalsOf) return;
    this.stopRemovals?.();
    this.removalsOf = state;
    this.stopRemovals = state?.onForgedRemoved?.((removed) => {
      for (const { name, forgedAt } of removed) this.drop(name, forgedAt, 'went with its session (a conversation the retention deleted, an MCP session that ended)');
    });
  }

  /**
   * A look whose failure is logged and tried again later (1 s, then doubling to 30 s); resolves when
   * one succeeds (or the store is let go).
   */
  private lookOrRetry(): Promise<void> {
    const records = this.records;
    return this.refresh().then(
      () => {
        this.retryMs = 0;
        this.retried?.settle();
        this.retried = undefined;
      },
      (err: Error) => {
        if (records !== this.records) return undefined;
        if (!this.retry) {
          this.retryMs = Math.min(this.retryMs ? this.retryMs * 2 : RETRY_FIRST_MS, RETRY_MAX_MS);
          this.log.warn(`forged tools: cannot read the state store: ${err.message}; looking again in ${this.retryMs / 1000} s`);
          this.retry = setTimeout(() => {
            this.retry = undefined;
            void this.lookOrRetry();
          }, this.retryMs);
          this.retry.unref();
        }
        if (!this.retried) {
          let settle = () => {};
          const promise = new Promise<void>((resolve) => (settle = resolve));
          this.retried = { promise, settle };
        }
        return this.retried.promise;
      },
    );
  }

  /**
   * Registers the records added since the last look. A caller gets a look
   * that starts after it asked (callers meanwhile share it), so what was
   * committed before is seen.
   */
  refresh(): Promise<void> {
    if (!this.records) return Promise.resolve();
    if (!this.queued) {
      const look = this.running.then(() => {
        this.queued = undefined;
        return this.look();
      });
      this.queued = look;
      this.running = look.catch(() => {});
    }
    return this.queued;
  }

  private async look(): Promise<void> {
    const records = this.records;
    if (!records) return;
    let next = this.seq;
    let blocked = false;
    const changes = await records.since(this.seq);
    // The removals after this.seq were pruned (a day old): every record comes anew, and a tool taken from the
    // store that is not among them was removed meanwhile.
    const anew = changes.some((change) => 'pruned' in change);
    const held = new Set<string>();
    for (const change of changes) {
      if ('pruned' in change) {
        next = 0;
        continue;
      }
      const name = 'record' in change ? change.record.request.name : change.removed.name;
      if ('record' in change) held.add(forgeKey(name, change.record.forgedAt));
      // A candidate of that name is being tested here: its forge will be refused (the name is taken), look again after.
      if (this.isCandidate(name)) blocked = true;
      else if ('record' in change) this.register(change.record);
      else this.drop(name, change.removed.forgedAt, 'was removed from the state store');
      if (!blocked) next = change.seq;
    }
    if (anew) {
      for (const [name, forgedAt] of [...this.fromStore]) if (!held.has(forgeKey(name, forgedAt)) && !this.isCandidate(name)) this.drop(name, forgedAt, 'was removed from the state store');
    }
    if (records === this.records) this.seq = next;
  }

  /**
   * Takes away the forged tool of this name and forgedAt (the store removed it): unregistered, and its
   * local copy deleted once the calls running on it are done. Another tool of the name (forged anew since,
   * or of another kind) stays. A tool on this process's disk that the store never held also stays.
   */
  private drop(name: string, forgedAt: string, why: string): void {
    if (this.fromStore.get(name) === forgedAt) this.fromStore.delete(name);
    const tool = this.registry.get(name);
    if (!isForged(tool) || tool.forged.forgedAt !== forgedAt) return;
    this.registry.unregister(name);
    this.log.info(`forged tool ${name} ${why}: no longer served here`);
    void this.registry
      .retire(tool)
      .catch(() => {})
      .then(() => {
        // Unless the name was forged anew meanwhile (its new copy is then there).
        if (this.local.load(name)?.forgedAt === forgedAt) this.local.remove(name);
      });
  }

  private isCandidate(name: string): boolean {
    const tool = this.registry.get(name);
    return isForged(tool) && tool.forged.owner === CANDIDATE_OWNER;
  }

  /** Registers a record, or puts it in place of another forge of its name (one this process restored from its disk, or missed the removal of). */
  private register(record: ForgedRecord): void {
    const { name } = record.request;
    const existing = this.registry.get(name);
    if (existing && isForged(existing) && existing.forged.forgedAt === record.forgedAt) {
      this.fromStore.set(name, record.forgedAt); // this very forge
      return;
    }
    if (existing && !isForged(existing)) return; // another kind of tool
    if (!record.verdict?.approved || !record.testResults?.length || record.testResults.some((t) => !t.passed)) {
      this.log.warn(`forged tool ${name} in the state store is not registered: its record is not approved with every test passed`);
      return;
    }
    // This replica's forge.yaml decides what its forged tools may use, whoever forged them.
    const settings = this.settings();
    const refusal = notAllowed(record.request, settings) ?? (existing ? undefined : roomProblem(this.registry, settings));
    if (refusal) {
      this.log.warn(`forged tool ${name} from the state store is not registered: ${refusal}`);
      return;
    }
    try {
      this.local.save(record);
      const tool = createForgedTool(record.request, forgedMark(record), this.host(name));
      if (existing) {
        this.registry.replace(tool, `forged:${name}`);
        this.fromStore.set(name, record.forgedAt);
        void this.registry.retire(existing).catch(() => {});
        return;
      }
      const problem = this.registry.register(tool, `forged:${name}`);
      if (problem) {
        void tool.close?.();
        this.log.warn(`forged tool ${name} from the state store is not registered: ${problem.message}`);
      } else this.fromStore.set(name, record.forgedAt);
    } catch (err) {
      this.log.warn(`forged tool ${name} from the state store is not registered: ${(err as Error).message}`);
    }
  }
}

/** One forge of a name. */
function forgeKey(name: string, forgedAt: string): string {
  return `${name}\u0000${forgedAt}`;
}
