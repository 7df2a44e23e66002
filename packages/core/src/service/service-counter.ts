/** A counter a service keeps (`Service.counter`), served on the server's `/metrics` under its name. */
export interface ServiceCounter {
  readonly name: string;
  readonly help: string;
  readonly labels: readonly string[];
  /** `gauge` for a value set rather than counted (`Service.gauge`); default `counter`. */
  readonly kind?: 'counter' | 'gauge';
  /** The count per label values (joined by NUL). */
  readonly counts: ReadonlyMap<string, { readonly values: readonly string[]; readonly value: number }>;
}

/**
 * A new counter, and the function that counts one event under `values` (one per label): each distinct list
 * of values is a series of its own.
 */
export function serviceCounter(
  name: string,
  help: string,
  labels: readonly string[],
  kind: 'counter' | 'gauge' = 'counter',
): {
  counter: ServiceCounter;
  count: (values: readonly string[], by?: number) => void;
  set: (values: readonly string[], value: number) => void;
} {
  const counts = new Map<string, { values: readonly string[]; value: number }>();
  const series = (values: readonly string[]) => {
    const key = values.join('\0');
    const found = counts.get(key);
    if (found) return found;
    const created = { values: [...values], value: 0 };
    counts.set(key, created);
    return created;
  };
  return {
    counter: { name, help, labels, counts, kind },
    count: (values, by = 1) => {
      series(values).value += by;
    },
    set: (values, value) => {
      series(values).value = value;
    },
  };
}
