import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, ServerProcess } from '../server-process.js';
import { type UserProject, userProject } from '../user-project.js';

/**
 * A service that declares `concurrency`, `queue` and `cache` (docs/server.md, queues; docs/cache.md), served with
 * `npx tiffin serve` from a bare folder where npm installed the tarballs: waiting calls go by `Priority`, a call
 * whose `Tiffin-Timeout` passes while it waits is answered 504 without running, and a repeated input is a hit.
 */

/**
 * `hold` runs one call at a time (up to 4 wait) and each call waits for `open`; the order calls started in and
 * the count of `lookup` runs are read back from `runs`.
 */
const SERVICE = `import { JSONDescriptor, Service } from '@tiffin/core';

const started: string[] = [];
let lookups = 0;
let open!: () => void;
const gate = new Promise<void>((resolve) => {
  open = resolve;
});

const svc = new Service('queued', { version: '1' });
svc.api(
  { input: new JSONDescriptor(), output: new JSONDescriptor(), concurrency: 1, queue: 4, queuePerClient: 4 },
  async function hold(input: { id: string }) {
    started.push(input.id);
    await gate;
    return { id: input.id };
  },
);
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function release() {
  open();
  return { open: true };
});
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor(), cache: { ttl: 60 } }, function lookup(input: { word: string }) {
  lookups++;
  return { word: input.word, length: input.word.length };
});
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function runs() {
  return { started, lookups };
});
export default svc;
`;

let project: UserProject;
let server: ServerProcess;
let url: string;

beforeAll(async () => {
  project = await userProject({ kind: 'bare' });
  writeFileSync(join(project.dir, 'service.ts'), SERVICE);
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  server = new ServerProcess(project.bin('tiffin'), ['serve', 'service.ts', '--port', String(port)], {
    cwd: project.dir,
    env: project.env(),
  });
  await server.ready(`${url}/readyz`, 120_000);
}, 900_000);

afterAll(() => {
  server?.kill();
});

const post = (api: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/${api}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function waiting(): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('tiffin_api_server_queue_depth{api_name="hold"'));
  return Number(line?.slice(line.lastIndexOf(' ') + 1) ?? Number.NaN);
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2400 && !(await condition()); i++) await new Promise((r) => setTimeout(r, 25));
}

const runs = async () => (await (await post('runs', {})).json()) as { started: string[]; lookups: number };

describe('a service with concurrency, queue and cache, installed from the tarballs in a bare folder', () => {
  it('expires a queued call at its Tiffin-Timeout, then runs the waiting calls most urgent first', async () => {
    const first = post('hold', { id: 'first' });
    await until(async () => (await runs()).started.length === 1);
    const expired = await post('hold', { id: 'expired' }, { 'tiffin-timeout': '0.5' });
    expect(expired.status).toBe(504);
    expect(((await expired.json()) as { code: string }).code).toBe('DEADLINE_EXCEEDED');

    const low = post('hold', { id: 'low' }, { priority: 'u=7' });
    await until(async () => (await waiting()) === 1);
    const high = post('hold', { id: 'high' }, { priority: 'u=0' });
    await until(async () => (await waiting()) === 2);
    expect((await post('release', {})).status).toBe(200);
    expect((await Promise.all([first, low, high])).map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await runs()).started).toEqual(['first', 'high', 'low']);
  });

  it('sends a repeated input from the cache without running the function', async () => {
    const miss = await post('lookup', { word: 'tiffin' });
    expect(miss.headers.get('tiffin-cache')).toBe('miss');
    const hit = await post('lookup', { word: 'tiffin' });
    expect(hit.headers.get('tiffin-cache')).toBe('hit');
    expect(await hit.json()).toEqual(await miss.json());
    expect((await runs()).lookups).toBe(1);
  });
});
