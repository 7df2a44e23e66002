import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { isTiffinClientError } from '@tiffin/client';
import svc from '../service.js';
import { serveInProcess } from './serve-in-process.js';

// The service runs in this process on a free port; the client calls it over HTTP.
const { client, close } = await serveInProcess(svc);
after(close);

test('shout upper-cases the text', async () => {
  assert.equal(await client.shout('hello'), 'HELLO');
});

test('row_sums adds up each row', async () => {
  assert.deepEqual(
    await client.row_sums([
      [1, 2, 3, 4],
      [0.5, 0.5, 0, 0],
    ]),
    [10, 1],
  );
});

test('rows of the wrong length are a 400', async () => {
  await assert.rejects(client.row_sums([[1, 2, 3]]), (e) => isTiffinClientError(e) && e.status === 400);
});
