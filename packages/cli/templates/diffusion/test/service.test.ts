import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { isTiffinClientError } from '@tiffin/client';
import svc from '../service.js';
import { serveInProcess } from './serve-in-process.js';

// The service runs in this process on a free port; the client calls it over HTTP.
const { client, close } = await serveInProcess(svc);
after(close);

test('text2img draws a JPEG', async () => {
  const image = (await client.$call('text2img', {
    prompt: 'a large red circle in the centre on a white background',
    num_inference_steps: 4,
    guidance_scale: 1.5,
    seed: 1,
  })) as Blob;
  assert.equal(image.type, 'image/jpeg');
  const bytes = new Uint8Array(await image.arrayBuffer());
  assert.deepEqual([...bytes.subarray(0, 3)], [0xff, 0xd8, 0xff]); // the JPEG signature
});

test('a step count below 1 is a 400', async () => {
  await assert.rejects(
    client.$call('text2img', { prompt: 'a red circle', num_inference_steps: 0 }),
    (e) => isTiffinClientError(e) && e.status === 400,
  );
});
