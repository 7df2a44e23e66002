/**
 * Events a source pushes, as an async iterable: `first` (what a late subscriber should see), then each event
 * `subscribe`'s listener receives, until `signal` aborts or an event for which `isLast` holds has been yielded.
 * The listener is removed however the iteration ends (finished, aborted, or its consumer gone).
 */
export async function* pushedEvents<T>(
  subscribe: (push: (event: T) => void) => () => void,
  signal: AbortSignal,
  options: { first?: readonly T[]; isLast?: (event: T) => boolean } = {},
): AsyncGenerator<T> {
  const buffered: T[] = [...(options.first ?? [])];
  let wake: (() => void) | undefined;
  const unsubscribe = subscribe((event) => {
    buffered.push(event);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    while (!signal.aborted) {
      const event = buffered.shift();
      if (event === undefined) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        continue;
      }
      yield event;
      if (options.isLast?.(event)) return;
    }
  } finally {
    unsubscribe();
    signal.removeEventListener('abort', onAbort);
  }
}
