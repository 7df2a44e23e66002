import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const FIXTURE = join(CLI_DIR, 'test', 'fixtures', 'service.ts');

/** A `tiffin` process run from sources (as `pnpm cli` does), with its output collected line by line. */
export class CliProcess {
  readonly child: ChildProcess;
  readonly stdoutLines: string[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: Array<() => void> = [];

  constructor(args: string[]) {
    this.child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'src/bin.ts', ...args], {
      cwd: CLI_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffered = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      this.stdoutLines.push(...lines);
      this.notify();
    });
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.notify();
        resolve({ code, signal });
      });
    });
  }

  private notify(): void {
    for (const w of this.waiters) w();
  }

  /** JSON log records printed so far. */
  records(): Array<Record<string, unknown>> {
    return this.stdoutLines.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  /** Wait until `count` records match (or fail after `ms`). */
  async waitFor(
    match: (r: Record<string, unknown>) => boolean,
    count = 1,
    ms = 20_000,
  ): Promise<Array<Record<string, unknown>>> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.records().filter(match);
      if (found.length >= count) return found;
      if (this.child.exitCode !== null) throw new Error(`tiffin exited early: ${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`timed out; output so far:\n${this.stdoutLines.join('\n')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      this.waiters = [];
    }
  }

  /** The URL from the n-th `ready` record. */
  async readyUrl(nth = 1): Promise<string> {
    const ready = await this.waitFor((r) => r.msg === 'ready', nth);
    return String(ready[nth - 1]!.url);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.child.exitCode === null) this.child.kill(signal);
  }
}
