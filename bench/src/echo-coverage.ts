/**
 * What one JSON echo executes: V8 precise coverage (call counts) of one request through quiet `serve()`'s
 * listener (`createApp(...).requestListener()`, logging off) and, for comparison, Fastify 5 and Koa 3, each
 * after a warm-up, over an in-memory socket (`servers/in-memory-http.ts`'s approach: no kernel, no load
 * generator). Prints, per server, the files and functions of the framework that ran (for Tiffin: files of
 * `packages/core/src`, so run it from source: `node --conditions=source --import tsx src/echo-coverage.ts`;
 * `--list` prints every function). A count, not a timing: the same on any machine.
 */
import { Session } from 'node:inspector/promises';
import { Duplex } from 'node:stream';
import { ECHO_PAYLOAD } from './echo-payload.js';
import { echoServer } from './servers/echo-servers.js';

const REQUEST = Buffer.from(
  `POST /echo HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(ECHO_PAYLOAD)}\r\n\r\n${ECHO_PAYLOAD}`,
);

/** One keep-alive connection that resolves each request once the whole response arrived. */
class MemorySocket extends Duplex {
  private done: (() => void) | null = null;
  private expected = -1;
  private received = 0;
  readonly remoteAddress = '127.0.0.1';

  send(): Promise<void> {
    this.expected = -1;
    this.received = 0;
    return new Promise((resolve) => {
      this.done = resolve;
      this.push(REQUEST);
    });
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.received += chunk.length;
    if (this.expected < 0) {
      const text = chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
      if (end < 0 || !length) throw new Error(`unexpected response: ${text.slice(0, 200)}`);
      this.expected = end + 4 + Number(length[1]);
    }
    if (this.received >= this.expected && this.done) {
      const done = this.done;
      this.done = null;
      setImmediate(done);
    }
    callback();
  }
}

type Kind = 'tiffin' | 'fastify' | 'koa';

/** Which scripts count as the framework's own: core's files for Tiffin, the package's for the others. */
function ownFile(kind: Kind, url: string): boolean {
  if (kind === 'tiffin') return url.includes('/packages/core/src/') || url.includes('/packages/core/dist/');
  return url.includes(`/node_modules/${kind}/`);
}

/** Scripts of npm packages the framework brings (find-my-way, koa-compose, ...), tsx's loader excluded. */
function dependencyFile(url: string): boolean {
  return url.includes('/node_modules/') && !url.includes('/node_modules/tsx/') && !url.includes('/@tiffin/');
}

interface Count {
  files: string[];
  functions: string[];
  /** Files and functions of the framework's npm dependencies that ran. */
  dependencies: { files: number; functions: number };
}

async function countOneEcho(kind: Kind): Promise<Count> {
  const server = await echoServer(kind);
  const socket = new MemorySocket();
  server.emit('connection', socket);
  for (let i = 0; i < 2000; i++) await socket.send(); // warm-up: lazy paths taken, JIT settled
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await session.post('Profiler.takePreciseCoverage'); // resets the counts
  await socket.send();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  await session.post('Profiler.stopPreciseCoverage');
  session.disconnect();
  socket.destroy();
  const files = new Set<string>();
  const functions: string[] = [];
  const dependencies = { files: new Set<string>(), functions: 0 };
  for (const script of result) {
    const own = ownFile(kind, script.url);
    if (!own && !dependencyFile(script.url)) continue;
    const short = script.url.replace(/^.*\/(packages\/core\/(src|dist)|node_modules\/[^/]+)\//, '');
    for (const fn of script.functions) {
      // The first range is the function's own; a count above zero: it ran during the one echo. `__name` is
      // the helper tsx's transform adds (it keeps function names), not Tiffin's code.
      if ((fn.ranges[0]?.count ?? 0) === 0 || fn.functionName === '__name') continue;
      if (!own) {
        dependencies.files.add(script.url);
        dependencies.functions++;
        continue;
      }
      files.add(short);
      functions.push(`${short} ${fn.functionName || '(anonymous)'}`);
    }
  }
  return {
    files: [...files].sort(),
    functions,
    dependencies: { files: dependencies.files.size, functions: dependencies.functions },
  };
}

const kinds = (process.argv.slice(2).filter((a) => !a.startsWith('--')) as Kind[]).length
  ? (process.argv.slice(2).filter((a) => !a.startsWith('--')) as Kind[])
  : (['tiffin', 'fastify', 'koa'] as Kind[]);
const list = process.argv.includes('--list');
for (const kind of kinds) {
  const { files, functions, dependencies } = await countOneEcho(kind);
  process.stdout.write(
    `${kind}: ${files.length} files, ${functions.length} functions per echo; its npm dependencies: ${dependencies.files} files, ${dependencies.functions} functions\n`,
  );
  if (list) for (const fn of functions) process.stdout.write(`  ${fn}\n`);
}
process.exit(0);
