/** Cancel requests inside one process (the `file:` store): delivered to this process's listeners. */
import type { CancelChannel } from './store.ts';

export class LocalCancels implements CancelChannel {
  private readonly listeners = new Set<(taskId: string) => void>();

  async request(taskId: string): Promise<void> {
    this.deliver(taskId);
  }

  subscribe(listener: (taskId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hands a request to every listener (a throwing listener does not stop the others). */
  deliver(taskId: string): void {
    for (const listener of this.listeners) {
      try {
        listener(taskId);
      } catch {
        // A listener's failure is its own; the request still reaches the rest.
      }
    }
  }
}
