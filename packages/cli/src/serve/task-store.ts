import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Service, TaskStore } from '@tiffin/core';
import { CLIException, LmdbTaskStore, tiffinHome } from '@tiffin/core/internal';

/** `--tasks` and `--tasks-dir`: where a served service's tasks live when it chose no store of its own. */
export interface TaskStoreFlags {
  /** `disk` (default: kept on disk), `memory` (lost on restart), or a `redis://host:port/db` URL. */
  tasks?: string;
  tasksDir?: string;
}

/** The store `--tasks` names: `$TIFFIN_TASKS_URL` when the flag is not given, else `disk`. */
export function taskStoreChoice(flags: TaskStoreFlags): string {
  return flags.tasks ?? (process.env.TIFFIN_TASKS_URL || 'disk');
}

/** Whether the choice is a store several processes share (so `--workers N` may serve task APIs). */
export function isSharedTaskStore(choice: string): boolean {
  return /^rediss?:\/\//.test(choice);
}

/**
 * Give `service` the store `--tasks` names, unless it has task APIs on a store of its own (`tasks: { store }`)
 * or none at all. The disk store's folder is taken by one process: a second one is refused, not allowed to
 * take the first one's running tasks for interrupted ones.
 */
export async function useTaskStore(service: Service, flags: TaskStoreFlags): Promise<void> {
  if (![...service.apis.values()].some((api) => api.task)) return;
  const choice = taskStoreChoice(flags);
  if (choice === 'memory') return;
  let store: TaskStore;
  if (isSharedTaskStore(choice)) {
    const { RedisTaskStore } = await import('@tiffin/tasks-redis');
    store = await RedisTaskStore.open({ url: choice, queue: service.name });
  } else if (choice === 'disk') {
    const dir = resolve(flags.tasksDir ?? join(tiffinHome(), 'tasks', service.name));
    claimFolder(dir);
    store = await LmdbTaskStore.open({ dir });
  } else {
    throw new CLIException(
      `--tasks ${choice}: use disk (the default), memory, or a redis://host:port/db URL`,
    );
  }
  if (!service.useTaskStore(store)) await store.close?.();
}

/** Mark `dir` as this process's (a pid file), refusing it while another live process has it. */
function claimFolder(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const pidFile = join(dir, 'server.pid');
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid))
      throw new CLIException(
        `The tasks in ${dir} are served by process ${pid}; give this server its own --tasks-dir, or share tasks through --tasks redis://…`,
      );
  }
  writeFileSync(pidFile, String(process.pid));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
