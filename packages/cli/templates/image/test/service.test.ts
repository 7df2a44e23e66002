import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { isTiffinClientError } from '@tiffin/client';
import { encodeBmp } from '@tiffin/io-image';
import svc from '../service.js';
import { serveInProcess } from './serve-in-process.js';

// The service runs in this process on a free port; the client calls it over HTTP.
const { client, close } = await serveInProcess(svc);
after(close);

/** A 2×1 BMP: one red pixel, one blue. */
const twoPixels = new Blob([new Uint8Array(encodeBmp(new Uint8Array([255, 0, 0, 0, 0, 255]), 2, 1))], {
  type: 'image/bmp',
});

test('describe gives the size and the mean colour', async () => {
  assert.deepEqual(await client.describe(twoPixels), { width: 2, height: 1, mean_rgb: [128, 0, 128] });
});

test('invert answers a PNG of the same size', async () => {
  const png = await client.invert(twoPixels);
  assert.equal(png.type, 'image/png');
  const facts = (await client.describe(png)) as { width: number; height: number };
  assert.equal(facts.width, 2);
  assert.equal(facts.height, 1);
});

test('bytes that are not an image are a 400', async () => {
  const text = new Blob(['not an image'], { type: 'image/png' });
  await assert.rejects(client.describe(text), (e) => isTiffinClientError(e) && e.status === 400);
});
