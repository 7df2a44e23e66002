import { expect, it } from 'vitest';
import { MemoryTaskStore } from '../../src/tasks/memory-task-store.js';
import { describeTaskStore } from './task-store-contract.js';

describeTaskStore('MemoryTaskStore', (limits) => new MemoryTaskStore(limits));

it('MemoryTaskStore gives the memory of expired tasks back without being asked', async () => {
  const store = new MemoryTaskStore({ resultTtl: 0.05 });
  for (let k = 0; k < 20; k++) {
    const t = await store.submit('api', {
      method: 'POST',
      url: '/',
      headers: [],
      body: new Uint8Array(1024),
    });
    await store.claim();
    await store.complete(t.id, { status: 200, headers: [], body: new Uint8Array(1024) });
  }
  expect(store.size).toBe(20);
  await new Promise((resolve) => setTimeout(resolve, 150));
  expect(store.size).toBe(0);
});

it('MemoryTaskStore bounds the bytes it holds: the oldest finished tasks go first, then a submit is refused', async () => {
  const store = new MemoryTaskStore({ maxHeldBytes: 100 });
  const submitted = (bytes: number) => ({
    method: 'POST',
    url: '/',
    headers: [] as Array<[string, string]>,
    body: new Uint8Array(bytes),
  });
  const answer = (bytes: number) => ({ status: 200, headers: [], body: new Uint8Array(bytes) });
  const a = await store.submit('api', submitted(60));
  await expect(store.submit('api', submitted(60))).rejects.toMatchObject({
    code: 'JOBS_FULL',
    httpStatus: 503,
  });
  await store.claim();
  await store.complete(a.id, answer(30));
  const b = await store.submit('api', submitted(60)); // 30 + 60 held
  await store.claim();
  await store.complete(b.id, answer(90)); // b's request is let go; a is forgotten so that 90 fits
  await expect(store.status(a.id)).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
  expect((await store.status(b.id)).status).toBe('succeeded');
  const c = await store.submit('api', submitted(20)); // b is forgotten for it
  await expect(store.status(b.id)).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
  await store.claim();
  // An answer that cannot fit beside the unfinished tasks fails its task.
  const d = await store.submit('api', submitted(70));
  await store.complete(c.id, answer(40));
  expect((await store.status(c.id)).error?.code).toBe('TASK_RESULT_TOO_LARGE');
  expect((await store.status(d.id)).status).toBe('queued');
});
