import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeTaskRoutes } from '@tiffin/core/testing';
import { afterAll } from 'vitest';
import { LmdbTaskStore } from '../../src/tasks/lmdb-task-store.js';
import { MemoryTaskStore } from '../../src/tasks/memory-task-store.js';
import type { TaskStore } from '../../src/tasks/task-store.js';

const root = mkdtempSync(join(tmpdir(), 'tiffin-task-routes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeTaskRoutes('MemoryTaskStore', async (limits) => new MemoryTaskStore(limits));

const dirs = new WeakMap<TaskStore, { dir: string; limits: object }>();
describeTaskRoutes(
  'LmdbTaskStore',
  async (limits) => {
    const dir = join(root, 'lmdb');
    const store = await LmdbTaskStore.open({ dir, ...limits });
    dirs.set(store, { dir, limits });
    return store;
  },
  {
    async reopen(store) {
      const { dir, limits } = dirs.get(store) as { dir: string; limits: object };
      await store.close?.();
      const again = await LmdbTaskStore.open({ dir, ...limits });
      dirs.set(again, { dir, limits });
      return again;
    },
  },
);
