import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgument, JSONDescriptor, Service } from '../../src/index.js';
import { start } from '../server/helpers.js';

let release: () => void = () => {};
const held = new Promise<void>((resolve) => {
  release = resolve;
});
const svc = new Service('queue_ready');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor(), task: true }, async function hold() {
  await held;
  return { done: true };
});

let server: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  server = await start(svc, { readyMaxQueue: 1 });
});
afterAll(async () => {
  release();
  await server.close();
});

/** Probe /readyz until it answers `status` (each probe asks the store for a fresh depth). */
async function readyzUntil(status: number): Promise<Response> {
  for (;;) {
    const res = await fetch(`${server.url}/readyz`);
    if (res.status === status) return res;
    await res.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('readyMaxQueue (--ready-max-queue)', () => {
  it('fails /readyz while more tasks wait than the bound, and passes again once they ran', async () => {
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const submitted = await fetch(`${server.url}/hold/submit`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(submitted.status).toBe(202);
    }
    // One runs (task concurrency 1), two wait: past the bound of 1.
    const busy = await readyzUntil(503);
    expect(await busy.text()).toContain('--ready-max-queue 1');
    release();
    expect((await readyzUntil(200)).status).toBe(200);
  });

  it('refuses a bound that is not a whole number', async () => {
    await expect(start(new Service('bad_bound'), { readyMaxQueue: -1 })).rejects.toThrow(InvalidArgument);
  });
});
