import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_DIR, CliProcess, FIXTURE } from './cli-process.js';

/** A folder as face-api.js ships its models: weight manifests and shards, no model.json. */
const WEIGHTS_ONLY = join(CLI_DIR, 'test', 'fixtures', 'weights-only');

const running: CliProcess[] = [];
/** Long-running servers are tracked and killed after each test; short commands (`track: false`) exit alone. */
function cli(args: string[], track = true): CliProcess {
  const p = new CliProcess(args);
  if (track) running.push(p);
  return p;
}
afterEach(async () => {
  for (const p of running.splice(0)) {
    p.kill('SIGKILL');
    await p.exited;
  }
});

describe('tiffin serve', () => {
  it('serves a TypeScript service file without a build step', async () => {
    const p = cli(['serve', FIXTURE, '--port', '0']);
    const url = await p.readyUrl();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${url}/echo`, { method: 'POST', body: 'hello' });
    expect(await res.text()).toBe('hello');
    const doc = (await (await fetch(`${url}/docs.json`)).json()) as { info: { title: string } };
    expect(doc.info.title).toBe('cli_fixture');
    const access = await p.waitFor((r) => r.msg === 'request' && r.path === '/echo');
    expect(access[0]!.requestId).toBe(res.headers.get('x-request-id'));
    // The ready line names each API by the route a client calls.
    const [ready] = await p.waitFor((r) => r.msg === 'ready');
    expect(ready!.apis).toMatchObject({ echo: 'POST /echo', pid: 'POST /pid' });
  });

  it('requires the bearer token given with --api-token on API calls, not on probes', async () => {
    const p = cli(['serve', FIXTURE, '--port', '0', '--api-token', 'cli-token']);
    const url = await p.readyUrl();
    const refused = await fetch(`${url}/echo`, { method: 'POST', body: 'hello' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const ok = await fetch(`${url}/echo`, {
      method: 'POST',
      body: 'hello',
      headers: { authorization: 'Bearer cli-token' },
    });
    expect(await ok.text()).toBe('hello');
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect(JSON.stringify(p.records())).not.toContain('cli-token');
  });

  it('answers 408 to a body that stalls past --body-timeout, and keeps serving', async () => {
    const p = cli(['serve', FIXTURE, '--port', '0', '--body-timeout', '1', '--max-concurrency', '1']);
    const url = await p.readyUrl();
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    socket.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n');
    let reply = '';
    socket.on('data', (d) => {
      reply += d.toString('latin1');
    });
    // The stalled body holds no permit: with --max-concurrency 1 the next call is still served.
    expect(await (await fetch(`${url}/echo`, { method: 'POST', body: 'hello' })).text()).toBe('hello');
    await new Promise((resolve) => socket.on('close', resolve));
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
  });

  it('picks a named export with file:export', async () => {
    const p = cli(['serve', `${FIXTURE}:other`, '--port', '0']);
    const url = await p.readyUrl();
    const doc = (await (await fetch(`${url}/docs.json`)).json()) as { info: { title: string } };
    expect(doc.info.title).toBe('other_export');
  });

  it('drains an in-flight request on SIGTERM, runs shutdown hooks and exits 0', async () => {
    const p = cli(['serve', FIXTURE, '--port', '0']);
    const url = await p.readyUrl();
    const inFlight = fetch(`${url}/slow`, { method: 'POST', body: '1000' });
    await p.waitFor((r) => r.msg === 'ready');
    await new Promise((resolve) => setTimeout(resolve, 300));
    p.kill('SIGTERM');
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('slept 1000');
    expect(await p.exited).toEqual({ code: 0, signal: null });
    const msgs = p.records().map((r) => r.msg);
    expect(msgs).toContain('fixture shutdown hook ran');
    expect(msgs.indexOf('shutting down')).toBeLessThan(msgs.indexOf('fixture shutdown hook ran'));
  });

  it('runs N worker processes on one port with --workers', async () => {
    const p = cli(['serve', FIXTURE, '--port', '0', '--workers', '2']);
    const ready = await p.waitFor((r) => r.msg === 'ready', 2);
    expect(ready[0]!.url).toBe(ready[1]!.url);
    expect(ready[0]!.pid).not.toBe(ready[1]!.pid);
    const pids = new Set<string>();
    for (let i = 0; i < 40 && pids.size < 2; i++) {
      const res = await fetch(`${ready[0]!.url}/pid`, {
        method: 'POST',
        body: '',
        headers: { connection: 'close' },
      });
      pids.add(await res.text());
    }
    expect(pids).toEqual(new Set(ready.map((r) => String(r.pid))));
    // Every worker serves the mounted route too.
    const mountedPids = new Set<number>();
    for (let i = 0; i < 40 && mountedPids.size < 2; i++) {
      const res = await fetch(`${ready[0]!.url}/hello`, { headers: { connection: 'close' } });
      mountedPids.add(((await res.json()) as { pid: number }).pid);
    }
    expect(mountedPids).toEqual(new Set(ready.map((r) => r.pid)));
    p.kill('SIGTERM');
    expect((await p.exited).code).toBe(0);
  });

  it('restarts on a file change with --reload', async () => {
    const dir = await mkdtemp(join(CLI_DIR, 'test', '.tmp-reload-'));
    try {
      const file = join(dir, 'service.ts');
      await cp(FIXTURE, file);
      const p = cli(['serve', file, '--port', '0', '--reload']);
      const first = await p.readyUrl(1);
      expect(await (await fetch(`${first}/echo`, { method: 'POST', body: 'a' })).text()).toBe('a');
      const source = await readFile(file, 'utf8');
      await writeFile(file, source.replace('return input;', "return 'edited ' + input;"));
      const second = await p.readyUrl(2);
      expect(await (await fetch(`${second}/echo`, { method: 'POST', body: 'a' })).text()).toBe('edited a');
      expect(((await (await fetch(`${second}/hello`)).json()) as { hello: string }).hello).toBe(
        'from a mounted route',
      );
      p.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.concurrent('tiffin serve errors: one line on stderr, exit code != 0', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['missing file', ['serve', 'does-not-exist.ts'], /Service file not found: .*does-not-exist\.ts/],
    [
      'a folder of weights without a model topology',
      ['serve', WEIGHTS_ONLY],
      /weights-only has no model\.json: this folder holds weights without a model topology/,
    ],
    [
      'a TF.js weights manifest',
      ['serve', join(WEIGHTS_ONLY, 'face_landmark_68_model-weights_manifest.json')],
      /is a TF\.js weights manifest without a model topology/,
    ],
    ['missing export', ['serve', `${FIXTURE}:nope`], /has no export named 'nope'/],
    ['export that is not a Service', ['serve', `${FIXTURE}:notAService`], /is not a Service/],
    ['unknown flag', ['serve', FIXTURE, '--bogus'], /unknown option '--bogus'/],
    ['bad port', ['serve', FIXTURE, '--port', 'abc'], /argument 'abc' is invalid/],
    ['missing argument', ['serve'], /missing required argument 'service'/],
    [
      'task APIs on in-memory tasks with --workers',
      ['serve', `${FIXTURE}:withTasks`, '--workers', '2'],
      /--workers 2 cannot serve the task APIs of 'cli_tasks' \(later\).*--workers 1/,
    ],
  ];
  for (const [name, args, pattern] of cases) {
    it(name, async () => {
      const p = cli(args, false);
      const { code } = await p.exited;
      expect(code).not.toBe(0);
      const lines = p.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(pattern);
    });
  }

  it('prints help for the program and for serve', async () => {
    const top = cli(['--help'], false);
    await top.exited;
    expect(top.stdoutLines.join('\n')).toContain('serve [options] <service...>');
    const sub = cli(['serve', '--help'], false);
    await sub.exited;
    expect(sub.stdoutLines.join('\n')).toContain('--workers <n>');
  });
});
