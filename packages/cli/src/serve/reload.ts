import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, relative } from 'node:path';
import { JsonLineLogger } from '@tiffin/core';
import { watch } from 'chokidar';

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

  // chokidar, not fs.watch: Node's recursive watch on Linux follows a file's inode, so once an editor or `sed -i`
  // replaces a file by a rename, later writes to it go unseen; chokidar watches it again under its name.
  const watcher = watch(root, {
    ignored: (path) => IGNORED.test(relative(root, path)),
    ignoreInitial: true,
    atomic: true,
  });
  watcher.on('all', (_event, path) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      logger.log('info', 'change detected; restarting', { file: relative(root, path) });
      restart();
    }, 150);
  });

  const stop = () => {
    if (stopping) return;
    stopping = true;
    void watcher.close();
    clearTimeout(timer);
    if (!child) process.exit(0);
    child.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  logger.log('info', 'watching for changes', { root });
  start();
}
