import { expect, it } from 'vitest';
import { MemoryTaskStore } from '../../src/internal.js';
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
