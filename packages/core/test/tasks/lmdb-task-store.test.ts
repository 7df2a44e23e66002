import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeTaskStore, describeTaskWebhooks } from '@tiffin/core/testing';
import { afterAll } from 'vitest';
import { LmdbTaskStore } from '../../src/tasks/lmdb-task-store.js';
import type { TaskStore } from '../../src/tasks/task-store.js';

const root = mkdtempSync(join(tmpdir(), 'tiffin-lmdb-tasks-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const dirs = new WeakMap<TaskStore, { dir: string; limits: object }>();

const durable = {
  async reopen(store: TaskStore) {
    const { dir, limits } = dirs.get(store) as { dir: string; limits: object };
    // A killed process writes nothing more: close the file under it, its running tasks unsettled.
    await store.close?.();
    return LmdbTaskStore.open({ dir, ...limits });
  },
};
const open = async (limits: object = {}) => {
  const dir = join(root, String(n++));
  const store = await LmdbTaskStore.open({ dir, ...limits });
  dirs.set(store, { dir, limits });
  return store;
};

describeTaskStore('LmdbTaskStore', open, durable);

describeTaskWebhooks('LmdbTaskStore', () => open(), durable);
