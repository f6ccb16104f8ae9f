/**
 * One task at a time per key, in this process: later tasks for a key wait
 * for the earlier ones (a failed one does not stop the queue). The
 * conversation stores queue turns here first, so only one turn per
 * conversation waits on the file lock or the database.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.then(
      () => {},
      () => {},
    );
    this.tails.set(key, settled);
    void settled.then(() => {
      if (this.tails.get(key) === settled) this.tails.delete(key);
    });
    return next;
  }
}
