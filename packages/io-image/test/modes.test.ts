import { NDArray } from '@tiffin/core';
import { describe, expect, it } from 'vitest';
import { Image, type PilMode, TiffinImage } from '../src/index.js';
import { errorOf, pngOf, rawPixels, readResponseBody, request } from './helpers.js';

// Two pixels: orange-ish with alpha 128, and white opaque.
const RGBA = Uint8Array.from([200, 100, 50, 128, 255, 255, 255, 255]);
const luma = (r: number, g: number, b: number) => (r * 19595 + g * 38470 + b * 7471 + 0x8000) >>> 16;

async function decodeAs(pilmode: PilMode | null | undefined) {
  const png = await pngOf(RGBA, 2, 1, 4);
  return new Image({ pilmode }).fromHttpRequest(request('image/png', png));
}

describe('pilmode decides the decoded pixels', () => {
  it('RGB (default) drops alpha: HxWx3 uint8', async () => {
    const img = await decodeAs(undefined);
    expect(img.mode).toBe('RGB');
    expect(img.pixels.shape).toEqual([1, 2, 3]);
    expect([...(img.data as Uint8Array)]).toEqual([200, 100, 50, 255, 255, 255]);
  });

  it('RGBA keeps alpha: HxWx4', async () => {
    const img = await decodeAs('RGBA');
    expect(img.pixels.shape).toEqual([1, 2, 4]);
    expect([...(img.data as Uint8Array)]).toEqual([...RGBA]);
  });

  it('L is ITU-R 601-2 luma, HxW; LA adds alpha', async () => {
    const l = await decodeAs('L');
    expect(l.pixels.shape).toEqual([1, 2]);
    expect([...(l.data as Uint8Array)]).toEqual([luma(200, 100, 50), 255]);
    const la = await decodeAs('LA');
    expect(la.pixels.shape).toEqual([1, 2, 2]);
    expect([...(la.data as Uint8Array)]).toEqual([luma(200, 100, 50), 128, 255, 255]);
  });

  it("'1' is bool (threshold 128), 'I' int32, 'F' float32", async () => {
    const one = await decodeAs('1');
    expect(one.pixels.dtype).toBe('bool');
    expect([...(one.data as Uint8Array)]).toEqual([0, 1]);
    const i = await decodeAs('I');
    expect(i.pixels.dtype).toBe('int32');
    expect([...(i.data as Int32Array)]).toEqual([luma(200, 100, 50), 255]);
    const f = await decodeAs('F');
    expect(f.pixels.dtype).toBe('float32');
    expect((f.data as Float32Array)[0]).toBeCloseTo(200 * 0.299 + 100 * 0.587 + 50 * 0.114, 3);
  });

  it("'P' gives palette indices into the 216-colour web palette; 'CMYK' is the naive inverse", async () => {
    const p = await decodeAs('P');
    expect(p.pixels.shape).toEqual([1, 2]);
    const idx = (p.data as Uint8Array)[0]!;
    expect([...p.palette!.subarray(idx * 3, idx * 3 + 3)]).toEqual([204, 102, 51]);
    expect((p.data as Uint8Array)[1]).toBe(215);
    const cmyk = await decodeAs('CMYK');
    expect([...(cmyk.data as Uint8Array)]).toEqual([55, 155, 205, 0, 0, 0, 0, 0]);
  });

  it('null keeps the native mode: RGBA stays RGBA, grey stays L, 16-bit grey is I', async () => {
    expect((await decodeAs(null)).mode).toBe('RGBA');
    const grey = await pngOf(Uint8Array.from([10, 20, 30, 40]), 2, 2, 1);
    const g = await new Image({ pilmode: null }).fromHttpRequest(request('image/png', grey));
    expect(g.mode).toBe('L');
    expect([...(g.data as Uint8Array)]).toEqual([10, 20, 30, 40]);
    const sharp = (await import('sharp')).default;
    const grey16 = await sharp(Uint16Array.from([1000, 40000]), { raw: { width: 2, height: 1, channels: 1 } })
      .toColourspace('grey16')
      .png()
      .toBuffer();
    const i = await new Image({ pilmode: null }).fromHttpRequest(request('image/png', grey16));
    expect(i.mode).toBe('I');
    expect([...(i.data as Int32Array)]).toEqual([1000, 40000]);
  });

  it('an invalid pilmode is an InvalidArgument at construction', () => {
    expect(() => new Image({ pilmode: 'XYZ' as never })).toThrow(
      "Invalid Image pilmode 'XYZ'. Supported PIL modes are 1, CMYK, F, I, L, LA, P, RGB, RGBA.",
    );
  });
});

describe('pixel arrays to images', () => {
  it('infers the mode from shape and dtype when pilmode is null', () => {
    expect(TiffinImage.fromNDArray(new NDArray(new Uint8Array(6), [2, 3]), null).mode).toBe('L');
    expect(TiffinImage.fromNDArray(new NDArray(new Uint8Array(12), [2, 2, 3]), null).mode).toBe('RGB');
    expect(TiffinImage.fromNDArray(new NDArray(new Uint8Array(16), [2, 2, 4]), null).mode).toBe('RGBA');
    expect(TiffinImage.fromNDArray(new NDArray(new Uint8Array(4), [2, 2], 'bool'), null).mode).toBe('1');
    expect(TiffinImage.fromNDArray(new NDArray(Float32Array.from([0.5, 1, 2, 3]), [2, 2]), null).mode).toBe(
      'F',
    );
    expect(TiffinImage.fromNDArray(new NDArray(Int32Array.from([0, 1000, 2, 3]), [2, 2]), null).mode).toBe(
      'I',
    );
  });

  it('a shape that does not fit the mode is a 400', async () => {
    const err = await errorOf(
      new Image({ pilmode: 'RGB' }).toHttpResponse(new NDArray(new Uint8Array(4), [2, 2]), null),
    );
    expect(err.status).toBe(400);
    expect(err.message).toBe('Image: mode RGB needs a pixel array of shape (H, W, 3), got (2, 2)');
  });

  it('an L array is written as a grey image', async () => {
    const arr = new NDArray(Uint8Array.from([0, 85, 170, 255]), [2, 2]);
    const body = await readResponseBody(
      await new Image({ pilmode: 'L', mime_type: 'image/png' }).toHttpResponse(arr, null),
    );
    const sharp = (await import('sharp')).default;
    expect((await sharp(body).metadata()).channels).toBe(1);
    const px = await rawPixels(body);
    expect([...px.data].filter((_, i) => i % px.channels === 0)).toEqual([0, 85, 170, 255]);
  });

  it('convert() and toSharp() give the same pixels as decoding', async () => {
    const rgba = new TiffinImage({ width: 2, height: 1, mode: 'RGBA', data: RGBA.slice() });
    expect([...(rgba.convert('L').data as Uint8Array)]).toEqual([luma(200, 100, 50), 255]);
    const { data, info } = await rgba.toSharp().raw().toBuffer({ resolveWithObject: true });
    expect(info.channels).toBe(4);
    expect([...data]).toEqual([...RGBA]);
    const round = await TiffinImage.fromSharp(rgba.toSharp(), 'RGB');
    expect([...(round.data as Uint8Array)]).toEqual([200, 100, 50, 255, 255, 255]);
  });
});
