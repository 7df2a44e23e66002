import { describeTaskStore, describeTaskWebhooks } from '@tiffin/core/testing';
import { expect, it } from 'vitest';
import { MemoryTaskStore } from '../../src/tasks/memory-task-store.js';
import { TASK_OVERHEAD_BYTES } from '../../src/tasks/task-bounds.js';

describeTaskStore('MemoryTaskStore', (limits) => new MemoryTaskStore(limits));

it('MemoryTaskStore gives the memory of expired tasks back without being asked', async () => {
  const store = new MemoryTaskStore({ resultTtl: 1 });
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
  await new Promise((resolve) => setTimeout(resolve, 1200));
  expect(store.size).toBe(0);
});

it('MemoryTaskStore bounds the bytes it holds without dropping an answer before its time to live', async () => {
  const k = TASK_OVERHEAD_BYTES;
  const store = new MemoryTaskStore({ maxHeldBytes: 3 * k + 100, resultTtl: 0.2 });
  const submitted = (bytes: number) => ({
    method: 'POST',
    url: '/',
    headers: [] as Array<[string, string]>,
    body: new Uint8Array(bytes),
  });
  const answer = (bytes: number) => ({ status: 200, headers: [], body: new Uint8Array(bytes) });
  const a = await store.submit('api', submitted(60));
  await store.claim();
  await store.complete(a.id, answer(60)); // a's request is let go as its answer comes in
  const b = await store.submit('api', submitted(30));
  await expect(store.submit('api', submitted(20))).rejects.toMatchObject({
    code: 'JOBS_FULL',
    httpStatus: 503,
  });
  // An answer that cannot fit beside the others fails its task; a's answer is still there.
  await store.claim();
  await store.complete(b.id, answer(k + 50));
  expect((await store.status(b.id)).error?.code).toBe('TASK_RESULT_TOO_LARGE');
  expect((await store.result(a.id)).body.byteLength).toBe(60);
  // Once a's time to live has passed, its bytes are free again.
  await new Promise((resolve) => setTimeout(resolve, 300));
  await expect(store.status(a.id)).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
  await store.submit('api', submitted(20));
});

describeTaskWebhooks('MemoryTaskStore', async () => new MemoryTaskStore());
