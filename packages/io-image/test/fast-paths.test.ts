import { PassThrough } from 'node:stream';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { Image, TiffinImage } from '../src/index.js';
import { snapshotPipeline } from '../src/pipeline/snapshot.js';
import { errorOf, gradientRgb, pngOf, rawPixels, readResponseBody, request } from './helpers.js';

const W = 48;
const H = 32;

function rawPipeline(pixels: Uint8Array) {
  return sharp(pixels, { raw: { width: W, height: H, channels: 3 } }).resize(24, 16, { kernel: 'lanczos3' });
}

describe('pipeline snapshots (encoding a returned sharp pipeline without copying its input)', () => {
  it('a snapshot encodes to the same bytes as sharp clone() does', async () => {
    const pixels = gradientRgb(W, H);
    const pipeline = rawPipeline(pixels);
    const viaClone = await pipeline.clone().jpeg().toBuffer();
    const viaSnapshot = await snapshotPipeline(pipeline).jpeg().toBuffer();
    expect(viaSnapshot.equals(viaClone)).toBe(true);
    const rawClone = await pipeline.clone().raw().toBuffer();
    const rawSnapshot = await snapshotPipeline(pipeline).raw().toBuffer();
    expect(rawSnapshot.equals(rawClone)).toBe(true);
  });

  it('the returned pipeline is left as it was: its own output format and input still work', async () => {
    const pipeline = rawPipeline(gradientRgb(W, H)).png();
    const before = await pipeline.clone().toBuffer();
    const res = await new Image({ mime_type: 'image/jpeg' }).toHttpResponse(pipeline, null);
    const jpeg = await readResponseBody(res);
    expect(jpeg.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    const after = await pipeline.toBuffer();
    expect(after.equals(before)).toBe(true);
    expect((await sharp(after).metadata()).format).toBe('png');
  });

  it('encoding through the descriptor gives the pixels of a plain clone-and-encode', async () => {
    const image = new TiffinImage({ width: W, height: H, mode: 'RGB', data: gradientRgb(W, H) });
    const pipeline = image.toSharp().resize(24, 16, { kernel: 'lanczos3' });
    const expected = await pipeline.clone().jpeg().toBuffer();
    const body = await readResponseBody(await new Image().toHttpResponse(pipeline, null));
    expect(body.equals(expected)).toBe(true);
    const bmp = await readResponseBody(
      await new Image({ mime_type: 'image/bmp' }).toHttpResponse(pipeline, null),
    );
    const fromBmp = await new Image({ pilmode: 'RGB' }).fromHttpRequest(request('image/bmp', bmp));
    const direct = await pipeline.clone().raw().toBuffer();
    expect(Buffer.from(fromBmp.data as Uint8Array).equals(direct)).toBe(true);
  });

  it('a pipeline fed by a stream (no input buffer yet) is still encoded', async () => {
    const png = await pngOf(gradientRgb(W, H), W, H);
    const pipeline = sharp().resize(12, 8);
    const source = new PassThrough();
    source.pipe(pipeline);
    const response = new Image({ mime_type: 'image/png' }).toHttpResponse(pipeline, null);
    source.end(png);
    const px = await rawPixels(await readResponseBody(await response));
    expect([px.width, px.height]).toEqual([12, 8]);
  });
});

describe('decoding to an 8-bit mode without reading the header first', () => {
  async function jpegOf(width: number, height: number): Promise<Buffer> {
    return sharp(gradientRgb(width, height), { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 90 })
      .toBuffer();
  }

  it('gives the same pixels as the header-first path (the file’s own mode)', async () => {
    const jpeg = await jpegOf(W, H);
    const fast = await new Image({ pilmode: 'RGB' }).fromHttpRequest(request('image/jpeg', jpeg));
    const headerFirst = await new Image({ pilmode: null }).fromHttpRequest(request('image/jpeg', jpeg));
    expect(headerFirst.mode).toBe('RGB');
    expect(Buffer.from(fast.data as Uint8Array).equals(Buffer.from(headerFirst.data as Uint8Array))).toBe(
      true,
    );
    const { data } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
    expect(Buffer.from(fast.data as Uint8Array).equals(data)).toBe(true);
  });

  it('refuses an image over maxPixels with the same 413 as the header-first path', async () => {
    for (const [type, bytes] of [
      ['image/jpeg', await jpegOf(W, H)],
      ['image/png', await pngOf(gradientRgb(W, H), W, H)],
    ] as const) {
      const fast = await errorOf(
        new Image({ pilmode: 'RGBA', maxPixels: W * H - 1 }).fromHttpRequest(request(type, bytes)),
      );
      const headerFirst = await errorOf(
        new Image({ pilmode: null, maxPixels: W * H - 1 }).fromHttpRequest(request(type, bytes)),
      );
      expect(fast).toEqual(headerFirst);
      expect(fast.status).toBe(413);
      expect(fast.message).toBe(
        `Image is ${W}x${H} (${W * H} pixels), over the limit of ${W * H - 1} pixels (option maxPixels)`,
      );
    }
  });

  it('reports a broken file exactly as the header-first path does', async () => {
    const jpeg = await jpegOf(W, H);
    const truncated = jpeg.subarray(0, Math.floor(jpeg.length / 2));
    const badHeader = Buffer.concat([jpeg.subarray(0, 4), Buffer.alloc(200, 0x41)]);
    for (const bytes of [truncated, badHeader]) {
      const fast = await errorOf(new Image({ pilmode: 'L' }).fromHttpRequest(request('image/jpeg', bytes)));
      const headerFirst = await errorOf(
        new Image({ pilmode: null }).fromHttpRequest(request('image/jpeg', bytes)),
      );
      expect(fast).toEqual(headerFirst);
      expect(fast.status).toBe(400);
      expect(fast.message).toMatch(/^Failed to parse uploaded image file: /);
    }
  });
});
