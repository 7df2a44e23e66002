import { describe, expect, it } from 'vitest';
import { cannyEdges } from '../../../src/service/controlnet/canny.js';
import {
  borderMedian,
  fitControlImage,
  processorSize,
} from '../../../src/service/controlnet/control-image-fit.js';
import { conditioningMap } from '../../../src/service/controlnet/controlnet-request.js';
import { type Rgb8Image, resizeLanczos } from '../../../src/service/lanczos-resize.js';

/**
 * A control image brought to the generation's size as A1111's ControlNet extension does (`resize_mode`), and the
 * module run at `processor_res`: exact expectations from the Pillow-exact Lanczos on the crop, the fill, the sizes.
 */
const resize = async (image: Rgb8Image, width: number, height: number) => resizeLanczos(image, width, height);

function drawn(width: number, height: number, fill: (x: number, y: number) => number[]): Rgb8Image {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set(fill(x, y), (y * width + x) * 3);
  return { width, height, data };
}

/** Columns `left` … `left + width` and rows `top` … `top + height` of `image`. */
function crop(image: Rgb8Image, left: number, top: number, width: number, height: number): Rgb8Image {
  return drawn(width, height, (x, y) => {
    const at = ((top + y) * image.width + left + x) * 3;
    return [...image.data.subarray(at, at + 3)];
  });
}

const pattern = (w: number, h: number) =>
  drawn(w, h, (x, y) => [(x * 29 + y * 7) % 256, (y * 41) % 256, (x * y) % 256]);

describe('resize_mode', () => {
  it('just_resize stretches the whole picture (the Lanczos resize to the size)', async () => {
    const picture = pattern(64, 48);
    expect(await fitControlImage(picture, 32, 32, 'just_resize', resize)).toEqual(
      resizeLanczos(picture, 32, 32),
    );
  });

  it('crop_and_resize keeps the middle at scale 1, and scales to cover then crops the middle otherwise', async () => {
    const wide = pattern(64, 32);
    // Both ratios: 0.5 and 1; the larger, 1, keeps the picture's size: columns 16 … 47 are the map.
    expect(await fitControlImage(wide, 32, 32, 'crop_and_resize', resize)).toEqual(crop(wide, 16, 0, 32, 32));
    // 64×48 to 32×32: scale 2/3, 42.67 → 43 × 32, then columns 5 … 36 (⌊(43 − 32) / 2⌋ = 5).
    const picture = pattern(64, 48);
    expect(await fitControlImage(picture, 32, 32, 'crop_and_resize', resize)).toEqual(
      crop(resizeLanczos(picture, 43, 32), 5, 0, 32, 32),
    );
    // Upscaled: 16×24 to 32×32: scale 2 → 32 × 48, rows 8 … 39.
    const tall = pattern(16, 24);
    expect(await fitControlImage(tall, 32, 32, 'crop_and_resize', resize)).toEqual(
      crop(resizeLanczos(tall, 32, 48), 0, 8, 32, 32),
    );
  });

  it("resize_and_fill fits the picture in the middle and fills the rest with its border's median colour", async () => {
    // A border of one colour around a pattern: the median is that colour.
    const framed = drawn(64, 32, (x, y) =>
      x === 0 || y === 0 || x === 63 || y === 31 ? [10, 200, 30] : [(x * 13) % 256, (y * 17) % 256, 90],
    );
    const fitted = await fitControlImage(framed, 32, 32, 'resize_and_fill', resize);
    // Scale 0.5 → 32 × 16, at rows 8 … 23.
    const inner = resizeLanczos(framed, 32, 16);
    const expected = drawn(32, 32, (x, y) =>
      y >= 8 && y < 24
        ? [...inner.data.subarray(((y - 8) * 32 + x) * 3, ((y - 8) * 32 + x) * 3 + 3)]
        : [10, 200, 30],
    );
    expect(fitted).toEqual(expected);
  });

  it("the border's median is numpy's: the middle two averaged on an even count, then truncated", () => {
    // Border values of channel 0: 1 and 4, three times each: (1 + 4) / 2 = 2.5 → 2.
    const two = drawn(2, 1, (x) => (x === 0 ? [1, 0, 255] : [4, 9, 255]));
    expect(borderMedian(two)).toEqual([2, 4, 255]);
    const odd = drawn(1, 1, () => [7, 8, 9]);
    expect(borderMedian(odd)).toEqual([7, 8, 9]);
  });

  it('a picture at the size already is the map as it is, whatever the mode', async () => {
    const picture = pattern(32, 32);
    for (const mode of ['just_resize', 'crop_and_resize', 'resize_and_fill'] as const)
      expect(await fitControlImage(picture, 32, 32, mode, resize)).toBe(picture);
  });
});

describe('processor_res', () => {
  it("sizes the module's run by the short side (rounded half to even)", () => {
    expect(processorSize(pattern(48, 32), 64)).toEqual([96, 64]);
    expect(processorSize(pattern(30, 45), 64)).toEqual([64, 96]);
    // 40 × 64/25 = 102.4 → 102.
    expect(processorSize(pattern(40, 25), 64)).toEqual([102, 64]);
  });

  it('runs canny at that resolution, then brings its map to the size by resize_mode', async () => {
    const picture = drawn(48, 32, (x, y) =>
      (x - 20) ** 2 + (y - 16) ** 2 < 100 ? [240, 220, 60] : [20, 40 + x, 90],
    );
    const unit = { module: 'canny' as const, low_threshold: 100, high_threshold: 200, processor_res: 64 };
    const map = await conditioningMap(picture, { ...unit, resize_mode: 'crop_and_resize' }, 32, 32);
    const atRes = cannyEdges(resizeLanczos(picture, 96, 64), 100, 200);
    // 96×64 to 32×32: scale 1/2 → 48 × 32, columns 8 … 39.
    expect(map).toEqual(crop(resizeLanczos(atRes, 48, 32), 8, 0, 32, 32));
    // Without processor_res (pixel perfect): the crop first, Canny at the generation's size.
    const perfect = await conditioningMap(
      picture,
      { ...unit, processor_res: null, resize_mode: 'crop_and_resize' },
      32,
      32,
    );
    // 48×32 to 32×32: scale 1 (no resampling), columns 8 … 39.
    expect(perfect).toEqual(cannyEdges(crop(picture, 8, 0, 32, 32), 100, 200));
    expect(perfect.data).not.toEqual(map.data);
  });
});
