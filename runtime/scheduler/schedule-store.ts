/**
 * Where schedules set at run time live: `.forge/schedules.json` in the work
 * dir (rewritten whole, through a temporary file and a rename, so a reader
 * never sees half a file), and the history of firings in
 * `.forge/schedule-history.jsonl` (one JSON line per firing, the oldest
 * dropped past HISTORY_LIMIT). Both paths go through the path guard, so a
 * `.forge` symlinked out of the work dir is refused.
 */
import { ForgeError } from '../diagnostics.ts';
import { appendFile, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PathGuard } from '../guard/path-guard.ts';
import type { ScheduleEntry, ScheduleRecords } from '../state/store.ts';
import { LocalDueTimes } from './local-due-times.ts';
import type { FiringRecord, ScheduledTask } from './scheduled-task.ts';

export const SCHEDULES_FILE = '.forge/schedules.json';
export const HISTORY_FILE = '.forge/schedule-history.jsonl';
/** Firings kept in the history file. */
export const HISTORY_LIMIT = 1000;
/** Run-time schedules one agent may hold. */
export const MAX_RUNTIME_SCHEDULES = 100;

export class ScheduleStoreError extends ForgeError {
  /** FORGE_SCHEDULE_STORE: the file cannot be used; FORGE_SCHEDULE_LIMIT: MAX_RUNTIME_SCHEDULES are set. */
  declare readonly code: 'FORGE_SCHEDULE_STORE' | 'FORGE_SCHEDULE_LIMIT';
  constructor(message: string, hint?: string, code: 'FORGE_SCHEDULE_STORE' | 'FORGE_SCHEDULE_LIMIT' = 'FORGE_SCHEDULE_STORE') {
    super(code, message, hint);
  }
}

interface StoredFile {
  version: 1;
  tasks: Omit<ScheduledTask, 'source'>[];
}

/** Writers of one file, across every store instance in this process, take turns. */
const queues = new Map<string, Promise<unknown>>();
function serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.then(work, work);
  queues.set(key, next.catch(() => {}));
  return next;
}

export class ScheduleStore implements ScheduleRecords {
  private readonly guard: PathGuard;
  private readonly dueTimes = new LocalDueTimes();

  constructor(workDir: string) {
    // Its file is in the state dir, which the file tools' guards refuse.
    this.guard = new PathGuard(workDir, { allowStateDir: true });
  }

  async runtimeTasks(): Promise<ScheduledTask[]> {
    return readTasks(this.guard.resolve(SCHEDULES_FILE).absolute);
  }

  /**
   * Adds or replaces a runtime task; says whether it was new. A new task past
   * MAX_RUNTIME_SCHEDULES is refused (checked under the writers' turn, so
   * two at once cannot both take the last place).
   */
  saveTask(task: Omit<ScheduledTask, 'source' | 'created_at' | 'updated_at'>, limit = MAX_RUNTIME_SCHEDULES, now = new Date()): Promise<{ created: boolean; task: ScheduledTask }> {
    const file = this.guard.resolve(SCHEDULES_FILE).absolute;
    return serialized(file, async () => {
      const tasks = await readTasks(file);
      const at = now.toISOString();
      const index = tasks.findIndex((t) => t.id === task.id);
      if (index < 0 && tasks.length >= limit) {
        throw new ScheduleStoreError(`there are already ${tasks.length} run-time schedules (the limit)`, 'delete one with schedule_delete first', 'FORGE_SCHEDULE_LIMIT');
      }
      const saved: ScheduledTask = { ...task, source: 'runtime', created_at: index >= 0 ? tasks[index].created_at : at, updated_at: at };
      if (saved.timezone === undefined) delete saved.timezone;
      if (index >= 0) tasks[index] = saved;
      else tasks.push(saved);
      await writeTasks(file, tasks);
      return { created: index < 0, task: saved };
    });
  }

  deleteTask(id: string): Promise<boolean> {
    const file = this.guard.resolve(SCHEDULES_FILE).absolute;
    return serialized(file, async () => {
      const tasks = await readTasks(file);
      const kept = tasks.filter((t) => t.id !== id);
      if (kept.length === tasks.length) return false;
      await writeTasks(file, kept);
      return true;
    });
  }

  appendHistory(record: FiringRecord): Promise<void> {
    const file = this.guard.resolve(HISTORY_FILE).absolute;
    return serialized(file, async () => {
      await mkdir(dirname(file), { recursive: true });
      await appendFile(file, JSON.stringify(record) + '\n');
      // Trim once the file holds about twice the limit, so most appends stay appends.
      const size = (await stat(file)).size;
      if (size > HISTORY_LIMIT * 2 * 200) {
        const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
        if (lines.length > HISTORY_LIMIT) await replaceFile(file, lines.slice(-HISTORY_LIMIT).join('\n') + '\n');
      }
    });
  }

  /** Due times live in this process's memory: the file store has one process. */
  async claimDue(entries: readonly ScheduleEntry[], now: Date): Promise<{ key: string; scheduledFor: Date }[]> {
    return this.dueTimes.claimDue(entries, now);
  }

  nextDue(): Record<string, string | undefined> {
    return this.dueTimes.nextDue();
  }

  /** Firings, newest first, optionally of one task. */
  async history(options: { id?: string; limit?: number } = {}): Promise<FiringRecord[]> {
    const text = await readIfPresent(this.guard.resolve(HISTORY_FILE).absolute);
    const records: FiringRecord[] = [];
    for (const line of (text ?? '').split('\n')) {
      if (!line.trim()) continue;
      try {
        records.push(JSON.parse(line) as FiringRecord);
      } catch {
        // A line cut short by a crash mid-append; the others still count.
      }
    }
    const selected = options.id ? records.filter((r) => r.id === options.id) : records;
    return selected.reverse().slice(0, options.limit ?? selected.length);
  }
}

async function readTasks(file: string): Promise<ScheduledTask[]> {
  const text = await readIfPresent(file);
  if (text === undefined) return [];
  let data: StoredFile;
  try {
    data = JSON.parse(text) as StoredFile;
  } catch (err) {
    throw new ScheduleStoreError(`${SCHEDULES_FILE} is not valid JSON: ${(err as Error).message}`, 'fix or delete the file; it holds the schedules set at run time');
  }
  if (!data || !Array.isArray(data.tasks)) throw new ScheduleStoreError(`${SCHEDULES_FILE} has no "tasks" list`, 'fix or delete the file');
  return data.tasks.map((t) => ({ ...t, source: 'runtime' as const }));
}

async function writeTasks(file: string, tasks: ScheduledTask[]): Promise<void> {
  const stored: StoredFile = { version: 1, tasks: tasks.map(({ source: _source, ...rest }) => rest) };
  await mkdir(dirname(file), { recursive: true });
  await replaceFile(file, JSON.stringify(stored, null, 2) + '\n');
}

/** The file's text, or undefined when it does not exist (yet). */
async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function replaceFile(file: string, content: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, content);
  await rename(temporary, file);
}
