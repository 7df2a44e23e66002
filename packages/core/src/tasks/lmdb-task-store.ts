import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { MemoryTaskStore, type MemoryTaskStoreOptions, type StoredTask } from './memory-task-store.js';
import { TaskStoreUnavailable } from './task-errors.js';

export interface LmdbTaskStoreOptions extends Partial<MemoryTaskStoreOptions> {
  /** The folder the tasks are kept in (created when missing); one process at a time uses it. */
  dir: string;
}

/**
 * Tasks kept on disk in an LMDB file (the `lmdb` package: an embedded, transactional key-value store, its
 * binaries shipped in the npm package), for one process: `tiffin serve`'s default. Every change is written
 * through and a submit, a claim and an end are acknowledged only once their write is flushed to disk, so a
 * `kill -9` at any moment loses nothing a client was told. When it opens again, queued tasks run, a task that
 * was running runs again while it has attempts left (else fails with `TASK_INTERRUPTED`), and finished answers
 * are served until they expire. The tasks are held in memory too (within the same bounds as `MemoryTaskStore`),
 * so reads cost no disk access; progress steps are written without waiting.
 */
export class LmdbTaskStore extends MemoryTaskStore {
  private closed = false;

  private constructor(
    private readonly db: RootDatabase<StoredTask, string>,
    options: Partial<MemoryTaskStoreOptions>,
  ) {
    super(options);
  }

  /** Open (or create) the store in `dir` and take back the tasks a stopped process left there. */
  static async open(options: LmdbTaskStoreOptions): Promise<LmdbTaskStore> {
    const { dir, ...limits } = options;
    mkdirSync(dir, { recursive: true });
    // overlappingSync off: a write's promise resolves once it is flushed, not merely committed.
    const db = open<StoredTask, string>({
      path: join(dir, 'tasks.lmdb'),
      compression: false,
      overlappingSync: false,
    });
    const store = new LmdbTaskStore(db, limits);
    const stored = [...db.getRange()].map(({ value }) => value);
    stored.sort((a, b) => a.view.created_at.localeCompare(b.view.created_at));
    const changed = store.restore(stored);
    await Promise.all(changed.map((task) => store.persist(task)));
    return store;
  }

  protected override async persist(task: StoredTask): Promise<void> {
    if (this.closed)
      throw new TaskStoreUnavailable('The task store is closed', { headers: { 'retry-after': '1' } });
    const { view, client, request, result, expiresMs, attempts, attempt } = task;
    try {
      await this.db.put(view.id, { view, client, request, result, expiresMs, attempts, attempt });
    } catch {
      // A full or failing disk: the change is not acknowledged (the submit answers 503).
      throw new TaskStoreUnavailable('The task store could not write to its disk', {
        headers: { 'retry-after': '1' },
      });
    }
  }

  protected override unpersist(id: string): void {
    if (!this.closed) void this.db.remove(id).catch(() => {});
  }

  notReadyReason(): string | null {
    return this.closed ? 'the task store is closed' : null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.close();
  }
}
