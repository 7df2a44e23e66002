import cluster, { type Worker } from 'node:cluster';
import { JsonLineLogger, type ServeOptions, type Service } from '@tiffin/core';
import { CLIException } from '@tiffin/core/internal';
import { MemoryTaskStore } from '@tiffin/core/tasks';
import { loadService, type ServiceTarget } from '../service-loader.js';
import { serveInProcess } from './single.js';
import { isSharedTaskStore, type TaskStoreFlags, taskStoreChoice } from './task-store.js';

/**
 * `--workers N`: the primary forks N processes that all listen on one port (node:cluster shares the socket).
 * SIGTERM/SIGINT are passed on; the primary exits 0 once every worker drained and exited.
 */
export async function serveWithWorkers(
  target: ServiceTarget,
  options: ServeOptions,
  workers: number,
  tasks: TaskStoreFlags = {},
): Promise<void> {
  if (!cluster.isPrimary) {
    await serveInProcess(target, options, undefined, tasks);
    return;
  }
  // Fail fast, in one line, on a bad file or export before forking anything.
  refuseProcessLocalTasks(await loadService(target), workers, taskStoreChoice(tasks));
  const logger = new JsonLineLogger();
  let stopping = false;
  const live = new Set<Worker>();
  const fork = () => {
    const worker = cluster.fork();
    live.add(worker);
    worker.once('exit', (code, signal) => {
      live.delete(worker);
      if (stopping) {
        if (live.size === 0) process.exit(0);
        return;
      }
      logger.log('warn', 'worker exited; starting another', { pid: worker.process.pid, code, signal });
      setTimeout(fork, 1000).unref();
    });
  };
  for (let i = 0; i < workers; i++) fork();
  logger.log('info', 'primary started', { pid: process.pid, workers });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.log('info', 'shutting down workers', { signal });
    if (live.size === 0) process.exit(0);
    for (const worker of live) worker.process.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/**
 * Tasks of one process (in its memory, or in the disk store one process holds) cannot be served by several
 * processes: node:cluster hands each connection to any worker, so a status or result call would reach a
 * process that never saw the task and get a 404.
 */
function refuseProcessLocalTasks(svc: Service, workers: number, choice: string): void {
  const taskApis = [...svc.apis.values()].filter((api) => api.task).map((api) => api.name);
  if (taskApis.length === 0 || !(svc.tasks instanceof MemoryTaskStore) || isSharedTaskStore(choice)) return;
  throw new CLIException(
    `--workers ${workers} cannot serve the task APIs of '${svc.name}' (${taskApis.join(', ')}): their tasks live in one process (in memory or in its disk store), so a status or result call could reach a process without the task. Use --workers 1, or share the tasks through Redis (--tasks redis://host:port/db, docs/tasks.md)`,
  );
}
