/**
 * Finished tasks in the order they expire (one time to live for all: the order they finished), forgotten from
 * the head as their time passes: by `sweep`, and by a timer set for the next one, so memory is given back even
 * when nobody asks (unref'd: it keeps no process alive).
 */
export class ExpiryQueue {
  private items: Array<{ id: string; at: number }> = [];
  /** The next item to expire. */
  private head = 0;
  private timer: NodeJS.Timeout | undefined;

  /** `forget` drops the task `id` if it still expires `at` (a task kept again expires later) and says if it did. */
  constructor(private readonly forget: (id: string, at: number) => boolean) {}

  /** A task finished now: it expires `at`, after every task already in the queue. */
  push(id: string, at: number): void {
    this.items.push({ id, at });
    this.schedule();
  }

  /** Tasks that ended before this process opened: they expire first, in the order given. */
  prepend(items: ReadonlyArray<{ id: string; at: number }>): void {
    this.items = [...items, ...this.items];
    this.schedule();
  }

  /** Forget the tasks past their time; returns how many. */
  sweep(): number {
    const now = Date.now();
    let forgotten = 0;
    while (this.head < this.items.length) {
      const next = this.items[this.head] as { id: string; at: number };
      if (next.at > now) break;
      this.head++;
      if (this.forget(next.id, next.at)) forgotten++;
    }
    // Drop the expired part of the list once it is most of it.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return forgotten;
  }

  private schedule(): void {
    if (this.timer) return;
    const next = this.items[this.head]?.at;
    if (next === undefined) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.sweep();
        this.schedule();
      },
      Math.max(0, next - Date.now()) + 10,
    );
    this.timer.unref();
  }
}
