import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Service, TaskStore } from '@tiffin/core';
import { CLIException, tiffinHome } from '@tiffin/core/internal';
import { LmdbTaskStore } from '@tiffin/core/tasks';

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
    // $TIFFIN_TASKS_LEASE_MS: how soon a dead replica's tasks are taken up again (default 5 s).
    const lease = Number(process.env.TIFFIN_TASKS_LEASE_MS);
    store = await RedisTaskStore.open({
      url: choice,
      queue: service.name,
      leaseMs: Number.isInteger(lease) && lease >= 200 ? lease : undefined,
      ...service.taskLimits,
    });
  } else if (choice === 'disk') {
    store = await LmdbTaskStore.open({
      dir: diskFolder(service.name, flags.tasksDir),
      ...service.taskLimits,
    });
  } else {
    throw new CLIException(
      `--tasks ${choice}: use disk (the default), memory, or a redis://host:port/db URL`,
    );
  }
  if (!service.useTaskStore(store)) await store.close?.();
}

/**
 * The disk store's folder, marked as this process's (a pid file). A folder named with `--tasks-dir` that
 * another live process holds is refused; the default one then gives way to a folder of this process's own
 * (a second server of the same service on one machine), so two servers never take each other's tasks.
 */
function diskFolder(serviceName: string, given: string | undefined): string {
  const dir = resolve(given ?? join(tiffinHome(), 'tasks', serviceName));
  const holder = folderHolder(dir);
  if (holder === null) return claim(dir);
  if (given !== undefined)
    throw new CLIException(
      `The tasks in ${dir} are served by process ${holder}; give this server its own --tasks-dir, or share tasks through --tasks redis://…`,
    );
  return claim(`${dir}-${process.pid}`);
}

/** The live process (other than this one) that holds `dir`, or null. */
function folderHolder(dir: string): number | null {
  const pidFile = join(dir, 'server.pid');
  if (!existsSync(pidFile)) return null;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid) ? pid : null;
}

function claim(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'server.pid'), String(process.pid));
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
