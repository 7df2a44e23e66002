import { type ChildProcess, spawn } from 'node:child_process';
import { type FSWatcher, watch } from 'node:fs';
import { dirname } from 'node:path';
import { JsonLineLogger } from '@tiffin/core';

const IGNORED = /(^|[/\\])(node_modules|\.git|dist|\.turbo)([/\\]|$)/;

/**
 * `--reload`: run the server in a child process (same command without --reload) and restart it whenever a
 * file under the service's folder changes.
 */
export function serveWithReload(serviceFile: string, childArgs: string[]): void {
  const logger = new JsonLineLogger();
  const root = dirname(serviceFile);
  let child: ChildProcess | undefined;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;

  const start = () => {
    const proc = spawn(process.execPath, [...process.execArgv, ...childArgs], { stdio: 'inherit' });
    child = proc;
    proc.once('exit', (code) => {
      if (child === proc) child = undefined;
      if (stopping) process.exit(0);
      else if (code !== 0 && code !== null)
        logger.log('warn', 'server exited; waiting for a file change', { code });
    });
  };

  const restart = () => {
    const old = child;
    if (!old) return start();
    child = undefined;
    old.once('exit', start);
    old.kill('SIGTERM');
  };

  let watcher: FSWatcher;
  try {
    watcher = watch(root, { recursive: true }, (_event, name) => {
      if (name && IGNORED.test(String(name))) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        logger.log('info', 'change detected; restarting', { file: name });
        restart();
      }, 150);
    });
  } catch {
    watcher = watch(root, () => restart());
  }

  const stop = () => {
    if (stopping) return;
    stopping = true;
    watcher.close();
    clearTimeout(timer);
    if (!child) process.exit(0);
    child.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  logger.log('info', 'watching for changes', { root });
  start();
}
