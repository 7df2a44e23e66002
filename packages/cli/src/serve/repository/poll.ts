import { watch } from 'chokidar';

/** Quiet time after the last change before the folder is read again (a copy in progress settles first). */
const SETTLE_MS = 200;

/**
 * `--model-control poll`: watch the repository folder and call `changed` once changes settle (one rescan at a
 * time; changes during it rescan again after). Returns the function that stops watching.
 */
export function watchRepository(dir: string, changed: () => Promise<void>): () => Promise<void> {
  // chokidar, not fs.watch: a file replaced by a rename (an editor, `cp` over it) is watched again by name.
  const watcher = watch(dir, { ignoreInitial: true, depth: 3, atomic: true });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  const rescan = () => {
    if (running) {
      again = true;
      return;
    }
    running = changed()
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          rescan();
        }
      });
  };
  watcher.on('all', () => {
    clearTimeout(timer);
    timer = setTimeout(rescan, SETTLE_MS);
  });
  return async () => {
    clearTimeout(timer);
    await watcher.close();
    await running;
  };
}
