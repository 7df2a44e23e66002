import { describe, expect, it } from 'vitest';
import { decodeBmp, Image, TiffinImage } from '../src/index.js';
import {
  BMP_10,
  errorOf,
  getHeader,
  gradientRgb,
  multipartRequest,
  pngOf,
  rawPixels,
  readResponseBody,
  request,
} from './helpers.js';

/** docs/spec/io-descriptors.md §12, cases 39–45 (with D1, D2, D4, D10), at descriptor level. */
describe('Image conformance cases', () => {
  const input = new Image();

  it('39: BMP in, pixel array out as a real BMP file, pixel-identical', async () => {
    expect(BMP_10.length).toBe(374);
    const output = new Image({ mime_type: 'image/bmp' });
    const img = await input.fromHttpRequest(request('image/bmp', BMP_10));
    const res = await output.toHttpResponse(img.pixels, null);
    expect(res.status).toBe(200);
    expect(res.headers.map(([n]) => n)).toEqual(['content-disposition', 'content-length', 'content-type']);
    expect(getHeader(res, 'content-disposition')).toBe('attachment; filename="output.bmp"');
    expect(getHeader(res, 'content-type')).toBe('image/bmp');
    const body = await readResponseBody(res);
    expect(getHeader(res, 'content-length')).toBe(String(body.length));
    expect(body.subarray(0, 2).toString('latin1')).toBe('BM');
    const back = decodeBmp(body);
    expect([back.width, back.height, back.channels]).toEqual([10, 10, 3]);
    expect(Buffer.from(back.data)).toEqual(Buffer.from(gradientRgb(10, 10)));
  });

  it('40/41: a body whose Content-Type is not an image type is a 400', async () => {
    for (const ct of ['application/json', 'application/pdf']) {
      const err = await errorOf(input.fromHttpRequest(request(ct, BMP_10)));
      expect(err.status).toBe(400);
      expect(err.type).toBe('BadInput');
      expect(err.message.startsWith(`mime type ${ct} is not allowed, allowed mime types are: `)).toBe(true);
      expect(err.message).toContain('image/bmp');
    }
  });

  it('42: a non-image claimed as image/png is a 400 "Failed to parse uploaded image file"', async () => {
    const err = await errorOf(input.fromHttpRequest(request('image/png', 'notanimage')));
    expect(err.status).toBe(400);
    expect(err.message.startsWith('Failed to parse uploaded image file: ')).toBe(true);
  });

  it('43: a multipart form with only a text file part is a 400 listing the content types', async () => {
    const req = multipartRequest([{ name: 'x', filename: 'a.txt', contentType: 'text/plain', data: 'hi' }]);
    const err = await errorOf(input.fromHttpRequest(req));
    expect(err.status).toBe(400);
    expect(err.message.startsWith('no multipart image file (allowed mime types are: ')).toBe(true);
    expect(err.message.endsWith('got files with content types text/plain')).toBe(true);
  });

  it('44: an empty multipart form is a 400 "no image file found in multipart form"', async () => {
    const err = await errorOf(
      input.fromHttpRequest(request('multipart/form-data; boundary=abc', '--abc--\r\n')),
    );
    expect(err).toMatchObject({
      status: 400,
      type: 'BadInput',
      message: 'no image file found in multipart form',
    });
  });

  it('45: BMP in, image out as PNG', async () => {
    const output = new Image({ mime_type: 'image/png' });
    const img = await input.fromHttpRequest(request('image/bmp', BMP_10));
    const res = await output.toHttpResponse(img, null);
    expect(getHeader(res, 'content-disposition')).toBe('attachment; filename="output.png"');
    expect(getHeader(res, 'content-type')).toBe('image/png');
    const body = await readResponseBody(res);
    expect([...body.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect((await rawPixels(body)).data).toEqual(Buffer.from(gradientRgb(10, 10)));
  });
});

describe('Image input (docs/spec/io-descriptors.md D1, D2, D10 and content sniffing)', () => {
  const input = new Image();

  it('a missing Content-Type is a 400, not a 500 (docs/spec/io-descriptors.md D1)', async () => {
    const err = await errorOf(input.fromHttpRequest(request(null, BMP_10)));
    expect(err.status).toBe(400);
    expect(err.message).toContain('Missing Content-Type header');
  });

  it('media types are parsed: IMAGE/BMP with parameters is image/bmp (docs/spec/io-descriptors.md D2)', async () => {
    const img = await input.fromHttpRequest(request('IMAGE/BMP; foo=bar', BMP_10));
    expect([img.width, img.height, img.mode]).toEqual([10, 10, 'RGB']);
  });

  it('the content decides the decoder: a PNG claimed as image/jpeg decodes as PNG', async () => {
    const png = await pngOf(gradientRgb(6, 4), 6, 4);
    const img = await input.fromHttpRequest(request('image/jpeg', png));
    expect(img.sourceMimeType).toBe('image/png');
    expect(Buffer.from(img.data as Uint8Array)).toEqual(Buffer.from(gradientRgb(6, 4)));
  });

  it('plain form fields before the image part are skipped (docs/spec/io-descriptors.md D10); the first allowed file part wins', async () => {
    const png = await pngOf(gradientRgb(3, 2), 3, 2);
    const req = multipartRequest([
      { name: 'note', data: 'a plain field' },
      { name: 'doc', filename: 'a.txt', contentType: 'text/plain', data: 'hi' },
      { name: 'img', filename: 'a.png', contentType: 'image/png', data: png },
      { name: 'img2', filename: 'b.bmp', contentType: 'image/bmp', data: BMP_10 },
    ]);
    const img = await input.fromHttpRequest(req);
    expect([img.width, img.height]).toEqual([3, 2]);
  });

  it('allowed_mime_types restricts the Content-Type and the sniffed content', async () => {
    const pngOnly = new Image({ allowed_mime_types: ['IMAGE/PNG'] });
    expect(pngOnly.allowedMimeTypes).toEqual(['image/png']);
    const claimed = await errorOf(pngOnly.fromHttpRequest(request('image/bmp', BMP_10)));
    expect(claimed.status).toBe(400);
    expect(claimed.message).toBe('mime type image/bmp is not allowed, allowed mime types are: image/png');
    // A BMP claiming to be a PNG is refused from its content.
    const sniffed = await errorOf(pngOnly.fromHttpRequest(request('image/png', BMP_10)));
    expect(sniffed.status).toBe(400);
    expect(sniffed.message).toContain('image/bmp (detected from its content), which is not allowed');
  });

  it('image/* patterns are accepted in allowed_mime_types', async () => {
    const any = new Image({ allowed_mime_types: ['image/*'] });
    const img = await any.fromHttpRequest(request('image/bmp', BMP_10));
    expect(img.width).toBe(10);
  });

  it('a truncated image is a 400, and an empty body too', async () => {
    const png = await pngOf(gradientRgb(64, 64), 64, 64);
    const truncated = await errorOf(
      input.fromHttpRequest(request('image/png', png.subarray(0, png.length / 2))),
    );
    expect(truncated.status).toBe(400);
    expect(truncated.message.startsWith('Failed to parse uploaded image file: ')).toBe(true);
    const empty = await errorOf(input.fromHttpRequest(request('image/png', '')));
    expect(empty).toMatchObject({
      status: 400,
      message: 'Failed to parse uploaded image file: the file is empty',
    });
  });

  it('a malformed multipart body is a 400', async () => {
    const err = await errorOf(input.fromHttpRequest(request('multipart/form-data', 'garbage')));
    expect(err.status).toBe(400);
  });

  it('the decoded image is a TiffinImage with pixels as an NDArray', async () => {
    const img = await input.fromHttpRequest(request('image/bmp', BMP_10));
    expect(img).toBeInstanceOf(TiffinImage);
    expect(img.pixels.shape).toEqual([10, 10, 3]);
    expect(img.pixels.dtype).toBe('uint8');
  });
});
