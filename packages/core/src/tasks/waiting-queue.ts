/**
 * The ids of the queued tasks in the order they are claimed (submit order), and their places in it: a task's
 * place is 1 + the waiting tasks before it, a walk over the waiting ids only (bounded by the unfinished-task
 * limit), never over the finished tasks kept for their time to live.
 */
export class WaitingQueue<T> {
  private readonly ids = new Set<string>();

  /** `lookup` finds a task by id; `waits` says whether it still waits to be claimed. */
  constructor(
    private readonly lookup: (id: string) => T | undefined,
    private readonly waits: (task: T) => boolean,
  ) {}

  add(id: string): void {
    this.ids.add(id);
  }

  delete(id: string): void {
    this.ids.delete(id);
  }

  /** The ids in claim order; the one being visited may be deleted. */
  [Symbol.iterator](): IterableIterator<string> {
    return this.ids.values();
  }

  /** 1 + the waiting tasks before `target`. */
  positionOf(target: T): number {
    let position = 1;
    for (const id of this.ids) {
      const task = this.lookup(id);
      if (task === target) break;
      if (task !== undefined && this.waits(task)) position++;
    }
    return position;
  }
}
