import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

export interface Spread {
  min: number;
  median: number;
  max: number;
}

/** min / median / max of a set of runs. */
export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: sorted[0]!, median, max: sorted[sorted.length - 1]! };
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function fmtSpread(s: Spread, digits = 0): string {
  return `${fmt(s.median, digits)} (min ${fmt(s.min, digits)}, max ${fmt(s.max, digits)})`;
}

/** The 1, 5 and 15 minute load averages: other work on the machine skews every figure. */
export function loadAverage(): string {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); NaN elsewhere. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the command name; clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}
