import { InvalidArgumentError } from 'commander';
import { stringify } from 'yaml';

export type OutputFormat = 'table' | 'json' | 'yaml';

/** commander parser for `--output`. */
export function parseOutputFormat(value: string): OutputFormat {
  if (value === 'table' || value === 'json' || value === 'yaml') return value;
  throw new InvalidArgumentError('expected table, json or yaml');
}

/** commander parser for repeatable `--label key=value`. */
export function collectLabel(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError(`expected key=value, got '${value}'`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

/** commander parser for a repeatable string option. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `2026-11-21 10:41:49` in local time: what a person scanning a table wants. */
export function formatCreationTime(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Left-aligned columns separated by two spaces, with a header row. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

export function renderStructured(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value, { lineWidth: 0 });
}
