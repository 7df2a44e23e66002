import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { isTiffinClientError } from '@tiffin/client';
import svc from '../service.js';
import { serveInProcess } from './serve-in-process.js';

// The service runs in this process on a free port; the client calls it over HTTP.
const { client, close } = await serveInProcess(svc);
after(close);

test('totals multiplies price by quantity per row', async () => {
  const orders = [
    { item: 'tea', price: 2.5, quantity: 4 },
    { item: 'cake', price: 3, quantity: 1 },
  ];
  assert.deepEqual(await client.totals(orders), [
    { item: 'tea', total: 10 },
    { item: 'cake', total: 3 },
  ]);
});

test('a quantity that is not a number is a 400', async () => {
  const orders = [{ item: 'tea', price: 2.5, quantity: 'many' }];
  await assert.rejects(client.totals(orders), (e) => isTiffinClientError(e) && e.status === 400);
});
