import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const FIXTURE = join(CLI_DIR, 'test', 'fixtures', 'service.ts');

/** A `tiffin` process run from sources (as `npx tiffin` does in a checkout), with its output collected line by line. */
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

/** How a `tiffin` (or any) child process ended, with everything it printed. */
export interface Exited {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A child process whose output is collected; `url` resolves with the URL of its first `ready` log record. */
export interface CollectedProcess {
  child: ChildProcess;
  done: Promise<Exited>;
  url: Promise<string>;
}

export function collectOutput(child: ChildProcess): CollectedProcess {
  let stdout = '';
  let stderr = '';
  const done = new Promise<Exited>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr })),
  );
  const url = new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
      const ready = /"msg":"ready","url":"([^"]+)"/.exec(stdout);
      if (ready) resolve(ready[1] as string);
    });
    done.then((r) => reject(new Error(`exited (${r.code}) before ready:\n${r.stderr}`)));
  });
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  // Only servers are awaited for `ready`; a command that just exits must not leave an unhandled rejection.
  url.catch(() => {});
  return { child, done, url };
}

/** `tiffin ...` run from sources (as `npx tiffin` does in a checkout) with extra environment, its output collected. */
export function spawnTiffin(args: string[], env: NodeJS.ProcessEnv = {}): CollectedProcess {
  return collectOutput(
    spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'src/bin.ts', ...args], {
      cwd: CLI_DIR,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/**
 * `tiffin diffusion start demo --port 0 ...args` on onnxruntime, with a TIFFIN_HOME of its own unless `home` is
 * given (a restart that must find the first process's files).
 */
export function spawnDemo(args: string[] = [], home?: string): CollectedProcess {
  return spawnTiffin(['diffusion', 'start', 'demo', '--port', '0', ...args], {
    TIFFIN_TF_BACKEND: 'onnxruntime',
    TIFFIN_HOME: home ?? mkdtempSync(join(tmpdir(), 'tiffin-cli-home-')),
  });
}
