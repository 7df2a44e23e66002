import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Start a server process (through `taskset` when pinned: it execs node, so the pid is the server's) and
 * resolve with the URL it announces: the first stdout line that is a URL, or the `url` of a `ready` log line.
 * The rest of its stdout (access logs) is read and dropped, as a terminal or log shipper would.
 */
export async function startServer(
  args: readonly string[],
  prefix: readonly string[],
): Promise<{ url: string; child: ChildProcess }> {
  const [command, ...prefixArgs] = prefix.length > 0 ? prefix : [process.execPath];
  // Extra node flags for every server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile one under load.
  const nodeFlags = process.env.BENCH_SERVER_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(
    command!,
    [...(prefix.length > 0 ? [...prefixArgs, process.execPath] : []), ...nodeFlags, ...args],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const plain = /^(http:\/\/\S+)\n/m.exec(out);
      const ready = /"msg":"ready","url":"([^"]+)"/.exec(out);
      const found = plain?.[1] ?? ready?.[1];
      if (found) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(found);
      } else if (out.length > 1 << 20) out = out.slice(-4096);
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
  return { url, child };
}

/** Stop a server started by `startServer` and wait for it to exit. */
export function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
