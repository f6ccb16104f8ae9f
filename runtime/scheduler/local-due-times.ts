/**
 * Due times kept in memory, for a store only one process uses (the `file:`
 * store): a task is first due at its next time after it is first seen; a
 * check that comes late fires a due task once, not once per missed time.
 */
import type { ScheduleEntry } from '../state/store.ts';

interface DueState {
  signature: string;
  due: Date | undefined;
}

export class LocalDueTimes {
  private readonly states = new Map<string, DueState>();

  claimDue(entries: readonly ScheduleEntry[], now: Date): { key: string; scheduledFor: Date }[] {
    const claimed: { key: string; scheduledFor: Date }[] = [];
    const present = new Set<string>();
    for (const { key, signature, schedule } of entries) {
      present.add(key);
      let state = this.states.get(key);
      if (state?.signature !== signature) {
        state = { signature, due: schedule.nextAfter(now) };
        this.states.set(key, state);
      }
      if (!state.due || now < state.due) continue;
      const scheduledFor = state.due;
      let due = schedule.nextAfter(scheduledFor);
      if (due && due <= now) due = schedule.nextAfter(now);
      state.due = due;
      claimed.push({ key, scheduledFor });
    }
    for (const key of this.states.keys()) if (!present.has(key)) this.states.delete(key);
    return claimed;
  }

  nextDue(): Record<string, string | undefined> {
    return Object.fromEntries([...this.states].map(([key, s]) => [key, s.due?.toISOString()]));
  }
}
