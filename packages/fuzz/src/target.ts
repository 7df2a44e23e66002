import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The fuzz target server, running in its own process. */
export interface Target {
  readonly httpPort: number;
  readonly grpcAddress: string;
  readonly pid: number;
  /** Set once the process ended (a crash, when the runner did not stop it). */
  readonly exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** What it printed on stderr (error logs, a crash's stack). */
  stderr(): string;
  /** Resident memory in bytes (Linux /proc), or null where unavailable. */
  rss(): number | null;
  stop(): Promise<void>;
}

export async function startTarget(): Promise<Target> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', join(PACKAGE_DIR, 'src', 'server.ts')],
    { cwd: PACKAGE_DIR, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
    if (stderr.length > 1_000_000) stderr = stderr.slice(-500_000);
  });
  let exit: Target['exit'] = null;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve();
    }),
  );
  const ready = await new Promise<{ http: string; grpc: string; pid: number }>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const line = out.split('\n').find((l) => l.startsWith('{"http"'));
      if (line) resolve(JSON.parse(line) as { http: string; grpc: string; pid: number });
    });
    child.once('exit', () => reject(new Error(`fuzz target exited before it was ready:\n${stderr}`)));
  });
  return {
    httpPort: Number(new URL(ready.http).port),
    grpcAddress: ready.grpc,
    pid: ready.pid,
    get exit() {
      return exit;
    },
    stderr: () => stderr,
    rss() {
      try {
        const status = readFileSync(`/proc/${ready.pid}/status`, 'utf8');
        const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
        return kb ? Number(kb) * 1024 : null;
      } catch {
        return null;
      }
    },
    async stop() {
      if (!exit) child.kill('SIGTERM');
      await exited;
    },
  };
}
