import { roundToFloat16 } from '@tiffin/core/internal';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { imagesToTensor, imageToTensor, TiffinImage } from '../src/index.js';
import { gradientRgb } from './helpers.js';

/** A 3×2 RGB image whose every byte differs, so a misplaced value cannot go unnoticed. */
const W = 3;
const H = 2;
const rgb = Uint8Array.from({ length: W * H * 3 }, (_, i) => i * 10 + 5);
const image = new TiffinImage({ width: W, height: H, mode: 'RGB', data: rgb });
const byte = (x: number, y: number, c: number) => rgb[(y * W + x) * 3 + c]!;

describe('imageToTensor', () => {
  it('lays out NCHW and NHWC from the same pixels, scaled to 0..1 by default', async () => {
    const nchw = await imageToTensor(image);
    const nhwc = await imageToTensor(image, { layout: 'nhwc' });
    expect(nchw.shape).toEqual([1, 3, H, W]);
    expect(nhwc.shape).toEqual([1, H, W, 3]);
    expect(nchw.dtype).toBe('float32');
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++)
        for (let c = 0; c < 3; c++) {
          const expected = Math.fround(byte(x, y, c) / 255);
          expect(nchw.data[c * H * W + y * W + x]).toBe(expected);
          expect(nhwc.data[(y * W + x) * 3 + c]).toBe(expected);
        }
  });

  it('normalises per channel and reverses the channels for BGR models', async () => {
    const mean = [0.485, 0.456, 0.406];
    const std = [0.229, 0.224, 0.225];
    const t = await imageToTensor(image, { mean, std });
    const bgr = await imageToTensor(image, { channels: 'BGR', mean: 0.5, std: 0.5 });
    for (let c = 0; c < 3; c++) {
      expect(t.data[c * H * W + 4]).toBeCloseTo((byte(1, 1, c) / 255 - mean[c]!) / std[c]!, 5);
      expect(bgr.data[c * H * W + 4]).toBeCloseTo((byte(1, 1, 2 - c) / 255 - 0.5) / 0.5, 5);
    }
  });

  it('keeps raw bytes in uint8 and clamps integer results', async () => {
    const bytes = await imageToTensor(image, { dtype: 'uint8', layout: 'nhwc' });
    expect(bytes.dtype).toBe('uint8');
    expect(Array.from(bytes.data as Uint8Array)).toEqual(Array.from(rgb));
    const clamped = await imageToTensor(image, { dtype: 'uint8', scale: 4 });
    expect(Math.max(...(clamped.data as Uint8Array))).toBe(255);
    const shifted = await imageToTensor(image, { dtype: 'int32', mean: 128 });
    expect(shifted.data[0]).toBe(byte(0, 0, 0) - 128);
  });

  it('rounds to float16 and widens to float64', async () => {
    const half = await imageToTensor(image, { dtype: 'float16' });
    expect(half.dtype).toBe('float16');
    expect(half.data[1]).toBe(roundToFloat16(byte(1, 0, 0) / 255));
    const double = await imageToTensor(image, { dtype: 'float64' });
    expect(double.data[1]).toBe(byte(1, 0, 0) / 255);
  });

  it('converts grey, palette and alpha images to the channels asked for', async () => {
    const grey = await imageToTensor(image, { channels: 'L', dtype: 'uint8' });
    expect(grey.shape).toEqual([1, 1, H, W]);
    expect(Array.from(grey.data as Uint8Array)).toEqual(Array.from(image.convert('L').data));
    const rgba = image.convert('RGBA');
    const fromRgba = await imageToTensor(rgba, { dtype: 'uint8', layout: 'nhwc' });
    expect(Array.from(fromRgba.data as Uint8Array)).toEqual(Array.from(rgb));
    const fromGrey = await imageToTensor(image.convert('L'), { dtype: 'uint8' });
    expect(fromGrey.shape).toEqual([1, 3, H, W]);
  });

  it('resizes with sharp to the model size (fill, cover, contain)', async () => {
    const big = new TiffinImage({ width: 40, height: 20, mode: 'RGB', data: gradientRgb(40, 20) });
    for (const fit of ['fill', 'cover', 'contain'] as const) {
      const t = await imageToTensor(big, {
        size: { width: 8, height: 8 },
        fit,
        dtype: 'uint8',
        layout: 'nhwc',
      });
      const reference = await sharp(Buffer.from(big.data as Uint8Array), {
        raw: { width: 40, height: 20, channels: 3 },
      })
        .resize(8, 8, { fit, background: { r: 0, g: 0, b: 0 } })
        .raw()
        .toBuffer();
      expect(t.shape).toEqual([1, 8, 8, 3]);
      expect(Buffer.from(t.data as Uint8Array).equals(reference)).toBe(true);
    }
  });

  it('stacks a batch, resizing images of different sizes to one', async () => {
    const other = new TiffinImage({ width: 5, height: 7, mode: 'RGB', data: gradientRgb(5, 7) });
    const batch = await imagesToTensor([image, other], { size: { width: 4, height: 4 } });
    expect(batch.shape).toEqual([2, 3, 4, 4]);
    const alone = await imageToTensor(other, { size: { width: 4, height: 4 } });
    expect(Array.from(batch.data.slice(48) as Float32Array)).toEqual(Array.from(alone.data as Float32Array));
    await expect(imagesToTensor([image, other])).rejects.toThrow(/different sizes/);
  });

  it('refuses options that cannot describe a tensor', async () => {
    await expect(imageToTensor(image, { std: [1, 0, 1] })).rejects.toThrow(/std must not be 0/);
    await expect(imageToTensor(image, { mean: [1, 2] })).rejects.toThrow(/3 values/);
    await expect(imageToTensor(image, { mean: Number.NaN })).rejects.toThrow(/finite/);
    await expect(imageToTensor(image, { size: { width: 0, height: 4 } })).rejects.toThrow(/whole pixels/);
    await expect(imageToTensor(image, { size: { width: 1e9, height: 1e9 } })).rejects.toThrow(/whole pixels/);
    await expect(imagesToTensor([])).rejects.toThrow(/no images/);
  });
});
