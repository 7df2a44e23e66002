import { Service, serve } from '@tiffin/core';
import { describe, expect, it } from 'vitest';
import { Image, type TiffinImage } from '../src/index.js';
import { gradientRgb, pngOf } from './helpers.js';

function latch() {
  let open = () => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}

describe('batching of Image', () => {
  it('the function gets the queued images in one array; each caller gets its own image back', async () => {
    const gate = latch();
    const batches: string[][] = [];
    const svc = new Service('images');
    svc.api(
      {
        input: new Image(),
        output: new Image({ mime_type: 'image/png' }),
        batchable: true,
        max_batch_size: 4,
        max_latency_ms: 1000,
      },
      async function same(images: TiffinImage[]) {
        batches.push(images.map((img) => `${img.width}x${img.height}`));
        if (batches.length === 1) await gate.wait;
        return images;
      },
    );
    const handle = await serve(svc, { port: 0, logger: false, handleSignals: false });
    const send = async (width: number, height: number) => {
      const png = await pngOf(gradientRgb(width, height), width, height);
      const res = await fetch(`${handle.url}/same`, {
        method: 'POST',
        body: png,
        headers: { 'content-type': 'image/png' },
      });
      const bytes = Buffer.from(await res.arrayBuffer());
      // PNG IHDR: width and height as big-endian u32 at bytes 16 and 20.
      return `${bytes.readUInt32BE(16)}x${bytes.readUInt32BE(20)}`;
    };
    try {
      const first = send(1, 1);
      await until(() => batches.length === 1);
      const rest = [send(2, 3), send(4, 5), send(6, 7)];
      await until(() => handle.app.runtime.batcher('same')!.depth === 3);
      gate.open();
      expect(await first).toBe('1x1');
      expect(await Promise.all(rest)).toEqual(['2x3', '4x5', '6x7']);
      // The three queued in whatever order their uploads arrived, in one batch.
      expect(batches.map((b) => [...b].sort())).toEqual([['1x1'], ['2x3', '4x5', '6x7']]);
    } finally {
      await handle.close();
    }
  });
});
