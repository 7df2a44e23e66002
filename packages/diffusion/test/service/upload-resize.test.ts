import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { rgbInput } from '../../src/service/kinds/images.js';
import { resizeLanczos } from '../../src/service/lanczos-resize.js';
import { DEFAULT_GENERATION_LIMITS } from '../../src/service/request-schemas.js';

/**
 * An upload larger than the served size is resized in core's task threads, not on the event loop: the loop keeps
 * turning (timers, other requests) while a big picture is resized, and the pixels are `resizeLanczos`'s (Pillow's
 * LANCZOS) byte for byte.
 */
const limits = { ...DEFAULT_GENERATION_LIMITS, maxSize: 512 };

/** A `width`×`height` RGB picture with detail in every direction (gradients and a checkerboard). */
function picture(width: number, height: number) {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      data[i] = (x * 255) / width;
      data[i + 1] = (y * 255) / height;
      data[i + 2] = ((x >> 3) + (y >> 3)) % 2 ? 230 : 20;
    }
  return { width, height, channels: 3, data };
}

describe('rgbInput', () => {
  it("resizes an upload over the served size off the event loop to resizeLanczos's bytes", async () => {
    const big = picture(2000, 1200);
    const resizing = rgbInput('img', big, limits);
    let done = false;
    resizing.then(
      () => {
        done = true;
      },
      () => {
        done = true;
      },
    );
    // The loop turns while the thread resizes: a resize on the loop would have finished before the first turn.
    let turns = 0;
    while (!done) {
      await nextTurn();
      turns++;
    }
    expect(turns).toBeGreaterThan(1);
    const out = await resizing;
    expect([out.width, out.height]).toEqual([512, 304]);
    const here = resizeLanczos({ width: big.width, height: big.height, data: big.data }, 512, 304);
    expect(Buffer.from(out.data).equals(Buffer.from(here.data))).toBe(true);
  });

  it('keeps the other uploads going: several resizes at once each get their own bytes', async () => {
    const sizes: Array<[number, number]> = [
      [900, 900],
      [1024, 640],
      [640, 1030],
    ];
    const outs = await Promise.all(sizes.map(([w, h]) => rgbInput('img', picture(w, h), limits)));
    for (const [k, [w, h]] of sizes.entries()) {
      const src = picture(w, h);
      const want = resizeLanczos(src, outs[k]!.width, outs[k]!.height);
      expect(Buffer.from(outs[k]!.data).equals(Buffer.from(want.data)), `${w}×${h}`).toBe(true);
    }
  });

  it('copies an upload already of its size without a thread, and refuses one too small to fit', async () => {
    const fits = picture(64, 48);
    const out = await rgbInput('img', fits, limits);
    expect(out).toMatchObject({ width: 64, height: 48 });
    expect(Buffer.from(out.data).equals(Buffer.from(fits.data))).toBe(true);
    expect(out.data).not.toBe(fits.data);
    await expect(rgbInput('img', picture(4, 4), limits)).rejects.toThrow(/at least 8 pixels/);
  });
});
