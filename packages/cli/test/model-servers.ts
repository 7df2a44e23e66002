import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CollectedProcess, spawnTiffin } from './cli-process.js';

/**
 * Zero-code model servers for a test file: a scratch folder and `TIFFIN_HOME`, `tiffin serve <model>` processes
 * on free ports with one instance each, all stopped (and the folder removed) by `close()`.
 */
export class ModelServers {
  dir = '';
  home = '';
  readonly processes: CollectedProcess[] = [];

  async open(prefix: string): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), prefix));
    this.home = join(this.dir, 'home');
  }

  /** `tiffin serve <args> --port 0 --instances 1`; resolves with the server's URL. */
  serve(args: string[]): Promise<string> {
    const server = spawnTiffin(['serve', ...args, '--port', '0', '--instances', '1'], {
      TIFFIN_HOME: this.home,
    });
    this.processes.push(server);
    return server.url;
  }

  async close(): Promise<void> {
    for (const s of this.processes) s.child.kill('SIGTERM');
    await Promise.all(this.processes.map((s) => s.done));
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** POST a JSON body (a string is sent as it is); the status and the parsed answer. */
export async function postJson(
  url: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}
