import { crc32, deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_PIXELS, Image } from '../src/index.js';
import { errorOf, gradientRgb, pngOf, request } from './helpers.js';

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A valid 1-bit greyscale PNG of width×height zeros: tiny on disk, huge once decoded. */
function bombPng(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  const raw = Buffer.alloc((1 + Math.ceil(width / 8)) * height);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A BMP whose header claims width×height but that carries no pixel data. */
function bombBmpHeader(width: number, height: number): Buffer {
  const buf = Buffer.alloc(54);
  buf.write('BM', 0, 'latin1');
  buf.writeUInt32LE(54, 2);
  buf.writeUInt32LE(54, 10);
  buf.writeUInt32LE(40, 14);
  buf.writeInt32LE(width, 18);
  buf.writeInt32LE(height, 22);
  buf.writeUInt16LE(1, 26);
  buf.writeUInt16LE(24, 28);
  return buf;
}

describe('decompression bombs and the pixel limit', () => {
  it('a 20000x20000 PNG of a few KB is refused with 413 from its header, without allocating its pixels', async () => {
    const bomb = bombPng(20000, 20000);
    expect(bomb.length).toBeLessThan(200_000);
    const image = new Image();
    const before = process.memoryUsage().rss;
    const err = await errorOf(image.fromHttpRequest(request('image/png', bomb)));
    const grown = process.memoryUsage().rss - before;
    expect(err.status).toBe(413);
    expect(err.type).toBe('PayloadTooLarge');
    expect(err.message).toBe(
      `Image is 20000x20000 (400000000 pixels), over the limit of ${DEFAULT_MAX_PIXELS} pixels (option maxPixels)`,
    );
    // Decoding would need 400 MB (1 byte per pixel) at the very least.
    expect(grown).toBeLessThan(150 * 1024 * 1024);
  });

  it('a BMP header announcing a huge image is refused before the codec runs', async () => {
    const err = await errorOf(new Image().fromHttpRequest(request('image/bmp', bombBmpHeader(30000, 30000))));
    expect(err.status).toBe(413);
    expect(err.message).toContain('30000x30000');
  });

  it('reads the BMP width unsigned as the decoder does: 0xFFFFFFFF is 4 G pixels wide, a 413', async () => {
    // On main the check read Math.abs(int32) = 1 while bmp-ts read 4294967295 and tried a 17 GB Buffer.alloc,
    // answering with Node's own message.
    const header = bombBmpHeader(1, 1);
    header.writeUInt32LE(0xffffffff, 18);
    const err = await errorOf(new Image().fromHttpRequest(request('image/bmp', header)));
    expect(err.status).toBe(413);
    expect(err.message).toContain('4294967295x1');
    expect(err.message).not.toMatch(/ERR_|Buffer|Array buffer|RangeError/);
  });

  it('refuses RLE data too short to describe the pixels its header declares', async () => {
    // 1,080 bytes: palette and one end-of-bitmap marker for 9456x9456 pixels, under max_pixels. On main: 780 MB
    // and 0.6 s of decoding on the event loop.
    const rle = Buffer.concat([bombBmpHeader(9456, 9456), Buffer.alloc(1024), Buffer.from([0, 1])]);
    rle.writeUInt32LE(1, 30); // BI_RLE8
    rle.writeUInt16LE(8, 28);
    rle.writeUInt32LE(54 + 1024, 10);
    const err = await errorOf(new Image().fromHttpRequest(request('image/bmp', rle)));
    expect(err.status).toBe(413);
    expect(err.message).toMatch(/carries 2 bytes of RLE data/);
    // The same header with uncompressed rows missing is a truncated file: 400.
    const rows = bombBmpHeader(100, 100);
    expect((await errorOf(new Image().fromHttpRequest(request('image/bmp', rows)))).status).toBe(400);
  });

  it('maxPixels is configurable and checked against width x height', async () => {
    const small = new Image({ maxPixels: 99 });
    const png = await pngOf(gradientRgb(10, 10), 10, 10);
    const err = await errorOf(small.fromHttpRequest(request('image/png', png)));
    expect(err).toMatchObject({ status: 413 });
    const exact = new Image({ maxPixels: 100 });
    expect((await exact.fromHttpRequest(request('image/png', png))).width).toBe(10);
  });

  it('maxPixels must be a positive integer; the deprecated max_pixels is still read', () => {
    expect(() => new Image({ maxPixels: 0 })).toThrow(/maxPixels must be a positive integer/);
    expect(() => new Image({ maxPixels: 1.5 })).toThrow(/maxPixels/);
    expect(() => new Image({ max_pixels: 0 })).toThrow(/maxPixels must be a positive integer/);
    expect(new Image({ max_pixels: 7 }).toSpec().args).toMatchObject({ max_pixels: 7 });
  });
});
