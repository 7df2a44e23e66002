import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether Debian's `redis-server` is installed (`.ci/run` installs it; a machine without it skips). */
export function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * A real `redis-server` on a free loopback port, its data in an append-only file written on every change, so a
 * test can stop it (an outage) and start it again with the data there.
 */
export class RedisServer {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'tiffin-redis-'));

  private constructor(
    readonly port: number,
    /** Redis's `appendfsync`: `always` (the tests: an outage loses nothing) or `everysec` (its own default). */
    private readonly appendfsync: 'always' | 'everysec',
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  static async start(appendfsync: 'always' | 'everysec' = 'always'): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), appendfsync);
    await server.resume();
    return server;
  }

  /** Start (again) on the same port. */
  async resume(): Promise<void> {
    this.child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        this.appendfsync,
        '--dir',
        this.dir,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) resolve();
      };
      this.child?.stdout?.on('data', onData);
      this.child?.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
    });
  }

  /** Stop it as an outage does (connections refused); `resume` starts it again with its data. */
  async pause(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  /** The running server's process id (a benchmark pins it to a CPU of its own). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Freeze it (SIGSTOP): connections stay open and nothing answers, as a Redis that hangs rather than refuses. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  /** Let a frozen server go on (SIGCONT). */
  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
