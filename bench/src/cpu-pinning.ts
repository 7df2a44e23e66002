import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Where the echo bench runs its processes. On Linux with two or more CPUs and `taskset`, servers get the last
 * CPU and the load generator (this process) the first, so the client and the server under test do not
 * preempt each other on every request — the usual way to run a loopback HTTP benchmark. Elsewhere: unpinned.
 */
export interface CpuPinning {
  /** Command prefix for a server process, e.g. ['taskset', '-c', '1']; empty when unpinned. */
  readonly serverPrefix: readonly string[];
  /** For the printout. */
  readonly description: string;
  /** Pin this process to the load generator's CPU; returns a function restoring its previous mask. */
  pinLoadGenerator(): () => void;
}

function tasksetWorks(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function cpuPinning(): CpuPinning {
  const cpus = availableParallelism();
  if (process.platform !== 'linux' || cpus < 2 || process.env.BENCH_NO_PINNING || !tasksetWorks()) {
    return { serverPrefix: [], description: 'unpinned', pinLoadGenerator: () => () => {} };
  }
  const serverCpu = String(cpus - 1);
  return {
    serverPrefix: ['taskset', '-c', serverCpu],
    description: `server on CPU ${serverCpu}, load generator on CPU 0`,
    pinLoadGenerator() {
      const previous = execFileSync('taskset', ['-p', String(process.pid)], { encoding: 'utf8' })
        .trim()
        .split(':')
        .pop()!
        .trim();
      execFileSync('taskset', ['-p', '0x1', String(process.pid)], { stdio: 'ignore' });
      return () => execFileSync('taskset', ['-p', previous, String(process.pid)], { stdio: 'ignore' });
    },
  };
}
