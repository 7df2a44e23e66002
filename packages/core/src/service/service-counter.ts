/** A counter a service keeps (`Service.counter`), served on the server's `/metrics` under its name. */
export interface ServiceCounter {
  readonly name: string;
  readonly help: string;
  readonly labels: readonly string[];
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
): { counter: ServiceCounter; count: (values: readonly string[]) => void } {
  const counts = new Map<string, { values: readonly string[]; value: number }>();
  return {
    counter: { name, help, labels, counts },
    count: (values) => {
      const key = values.join('\0');
      const series = counts.get(key);
      if (series) series.value++;
      else counts.set(key, { values: [...values], value: 1 });
    },
  };
}
