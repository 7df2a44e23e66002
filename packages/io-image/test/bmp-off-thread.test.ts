import { encode as encodeBmpFile } from 'bmp-ts';
import { describe, expect, it } from 'vitest';
import { decodeBmp, encodeBmp } from '../src/codec/bmp.js';
import { decodeBmpOffThread } from '../src/codec/bmp-off-thread.js';

/** A 32-bit BMP (bmp-ts takes ABGR pixels) with the given alpha per pixel. */
function bmp32(width: number, height: number, alpha: (i: number) => number): Buffer {
  const abgr = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++)
    abgr.set([alpha(i), (i * 3) % 256, (i * 5) % 256, (i * 7) % 256], i * 4);
  return encodeBmpFile({ width, height, data: abgr, bitPP: 32 }).data;
}

// BMP decoding moved off the event loop (bmp-ts in a worker, the pixel work in sharp); it must
// give exactly what the in-thread decoder gives.
describe('BMP decoded off the event loop', () => {
  it('matches the in-thread decoder: 24-bit RGB, 32-bit with alpha, 32-bit with a constant alpha', async () => {
    const rgb = new Uint8Array(7 * 5 * 3).map((_, i) => (i * 13) % 256);
    for (const file of [
      encodeBmp(rgb, 7, 5),
      bmp32(7, 5, (i) => (i * 37) % 256),
      bmp32(7, 5, () => 255),
      bmp32(7, 5, () => 0),
    ]) {
      const inThread = decodeBmp(file);
      const offThread = await decodeBmpOffThread(file);
      expect(offThread.channels).toBe(inThread.channels);
      expect([offThread.width, offThread.height]).toEqual([inThread.width, inThread.height]);
      expect(Buffer.from(offThread.data).equals(Buffer.from(inThread.data))).toBe(true);
    }
  });

  it('answers a malformed file with a message of its own, and keeps decoding afterwards', async () => {
    const file = encodeBmp(new Uint8Array(4 * 4 * 3), 4, 4);
    const cut = file.subarray(0, 60);
    await expect(decodeBmpOffThread(cut)).rejects.toThrow(/^BMP pixel data is malformed or truncated$/);
    expect((await decodeBmpOffThread(file)).width).toBe(4);
  });
});
