import { Context, NDArray } from '@tiffin/core';
import { applyResponseContext, BufferedHttpRequest } from '@tiffin/core/internal';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { encodeBmp, Image, SUPPORTED_MIME_TYPES, TiffinImage } from '../src/index.js';
import {
  BMP_10,
  errorOf,
  getHeader,
  gradientRgb,
  pngOf,
  rawPixels,
  readResponseBody,
  request,
} from './helpers.js';

const W = 16;
const H = 12;
const RGB = gradientRgb(W, H);
const image = () => new TiffinImage({ width: W, height: H, mode: 'RGB', data: RGB.slice() });

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'image/bmp': 'bmp',
  'image/gif': 'gif',
  'image/tiff': 'tiff',
  'image/webp': 'webp',
  'image/avif': 'avif',
};
const LOSSLESS = new Set(['image/png', 'image/bmp', 'image/tiff']);

describe('Image output formats', () => {
  it.each(SUPPORTED_MIME_TYPES)(
    '%s: encodes, announces itself, and decodes back to the same image',
    async (mime) => {
      const out = new Image({ mime_type: mime });
      const res = await out.toHttpResponse(image(), null);
      expect(getHeader(res, 'content-type')).toBe(mime);
      expect(getHeader(res, 'content-disposition')).toBe(`attachment; filename="output.${EXTENSIONS[mime]}"`);
      const body = await readResponseBody(res);
      // Round trip through the input side: sniffed as the same type, same size.
      const back = await new Image().fromHttpRequest(request(mime, body));
      expect(back.sourceMimeType).toBe(mime);
      expect([back.width, back.height]).toEqual([W, H]);
      const got = back.data as Uint8Array;
      if (LOSSLESS.has(mime)) expect(Buffer.from(got)).toEqual(Buffer.from(RGB));
      else {
        let diff = 0;
        for (let i = 0; i < RGB.length; i++) diff += Math.abs(got[i]! - RGB[i]!);
        expect(diff / RGB.length).toBeLessThan(mime === 'image/gif' ? 40 : 20);
      }
    },
  );

  it('BMP in -> BMP out echo is pixel-identical, through an NDArray and through the image', async () => {
    const input = new Image();
    const output = new Image({ mime_type: 'image/bmp' });
    const img = await input.fromHttpRequest(request('image/bmp', BMP_10));
    for (const value of [img, img.pixels]) {
      const body = await readResponseBody(await output.toHttpResponse(value, null));
      const again = await input.fromHttpRequest(request('image/bmp', body));
      expect(Buffer.from(again.data as Uint8Array)).toEqual(Buffer.from(gradientRgb(10, 10)));
    }
  });

  it('encodeBmp writes a 24-bit BM file', () => {
    const bmp = encodeBmp(gradientRgb(10, 10), 10, 10);
    expect(bmp.subarray(0, 2).toString('latin1')).toBe('BM');
    expect(bmp.readUInt16LE(28)).toBe(24);
    expect(bmp.readInt32LE(18)).toBe(10);
  });

  it('accepts a sharp pipeline', async () => {
    const pipeline = sharp({ create: { width: 5, height: 4, channels: 3, background: '#102030' } });
    const res = await new Image({ mime_type: 'image/png' }).toHttpResponse(pipeline, null);
    const px = await rawPixels(await readResponseBody(res));
    expect([px.width, px.height, ...px.data.subarray(0, 3)]).toEqual([5, 4, 0x10, 0x20, 0x30]);
  });

  it('passes through encoded bytes of the output type and transcodes others', async () => {
    const png = await pngOf(RGB, W, H);
    const asPng = await readResponseBody(
      await new Image({ mime_type: 'image/png' }).toHttpResponse(png, null),
    );
    expect(asPng.equals(png)).toBe(true);
    const asBmp = await readResponseBody(
      await new Image({ mime_type: 'image/bmp' }).toHttpResponse(png, null),
    );
    expect(asBmp.subarray(0, 2).toString('latin1')).toBe('BM');
    const err = await errorOf(new Image().toHttpResponse(Buffer.from('not an image'), null));
    expect(err.status).toBe(400);
    expect(err.message).toContain('Unsupported Image type received');
  });

  it('an unsupported return value is a 400 "Unsupported Image type received"', async () => {
    const err = await errorOf(new Image().toHttpResponse('hello' as never, null));
    expect(err.status).toBe(400);
    expect(err.message).toBe(
      "Unsupported Image type received: 'string', the Image IO descriptor only supports TiffinImage, NDArray, sharp pipelines and encoded image bytes.",
    );
  });

  it('a float pixel array (an average of two images) is clamped and rounded to uint8 RGB', async () => {
    const arr = new NDArray(
      Float64Array.from({ length: 2 * 2 * 3 }, (_, i) => i * 30.4 - 10),
      [2, 2, 3],
    );
    const body = await readResponseBody(
      await new Image({ mime_type: 'image/png' }).toHttpResponse(arr, null),
    );
    const px = await rawPixels(body);
    expect([...px.data]).toEqual([0, 20, 51, 81, 112, 142, 172, 203, 233, 255, 255, 255]);
  });

  it('with a context: handler headers first, status and cookies applied, content-disposition not leaked', async () => {
    const ctx = new Context(new BufferedHttpRequest(), {});
    ctx.response.status = 201;
    ctx.response.headers.set('x-trace', 'abc');
    ctx.response.setCookie('k', 'v');
    const res = applyResponseContext(
      await new Image({ mime_type: 'image/png' }).toHttpResponse(image(), ctx),
      ctx,
    );
    expect(res.status).toBe(201);
    expect(res.headers.map(([n]) => n)).toEqual([
      'x-trace',
      'content-disposition',
      'content-length',
      'content-type',
      'set-cookie',
    ]);
    expect(ctx.response.headers.has('content-disposition')).toBe(false);
    ctx.response.headers.set('content-disposition', 'inline');
    const res2 = applyResponseContext(
      await new Image({ mime_type: 'image/png' }).toHttpResponse(image(), ctx),
      ctx,
    );
    expect(getHeader(res2, 'content-disposition')).toBe('inline');
  });
});
