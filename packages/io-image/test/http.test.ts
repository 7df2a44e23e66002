import { type ServerHandle, Service, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBmp, Image, type TiffinImage } from '../src/index.js';
import { BMP_10, gradientRgb, multipartBody } from './helpers.js';

/** The conformance cases over HTTP, against a real server on 127.0.0.1, port 0. */
describe('Image over HTTP', () => {
  let server: ServerHandle;

  beforeAll(async () => {
    const svc = new Service('image_e2e');
    svc.api(
      { input: new Image(), output: new Image({ mime_type: 'image/bmp' }), name: 'echo_image' },
      async (img: TiffinImage) => img.pixels,
    );
    svc.api(
      { input: new Image(), output: new Image({ mime_type: 'image/png' }), name: 'echo_image_png' },
      async (img: TiffinImage) => img,
    );
    server = await serve(svc, { host: '127.0.0.1', port: 0, logger: false, handleSignals: false });
  });
  afterAll(() => server?.close());

  const post = (path: string, contentType: string | null, body: Buffer | string) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: contentType ? { 'content-type': contentType } : {},
      body,
    });

  it('39: BMP echo answers a BMP file with the same pixels', async () => {
    const res = await post('/echo_image', 'image/bmp', BMP_10);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/bmp');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="output.bmp"');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const back = decodeBmp(Buffer.from(await res.arrayBuffer()));
    expect(Buffer.from(back.data)).toEqual(Buffer.from(gradientRgb(10, 10)));
  });

  it('40/42/44 and a missing Content-Type are 400s with the JSON error body', async () => {
    const cases: Array<[string | null, Buffer | string, string]> = [
      ['application/json', BMP_10, 'mime type application/json is not allowed'],
      ['image/png', 'notanimage', 'Failed to parse uploaded image file: '],
      ['multipart/form-data; boundary=abc', '--abc--\r\n', 'no image file found in multipart form'],
      [null, BMP_10, 'Missing Content-Type header'],
    ];
    for (const [ct, body, message] of cases) {
      const res = await post('/echo_image', ct, body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/json');
      const json = (await res.json()) as { error: string; type: string };
      expect(json.type).toBe('BadInput');
      expect(json.error).toContain(message);
    }
  });

  it('45: multipart upload with a plain field first, answered as PNG', async () => {
    const body = multipartBody('b0undary', [
      { name: 'caption', data: 'hello' },
      { name: 'file', filename: 'x.bmp', contentType: 'image/bmp', data: BMP_10 },
    ]);
    const res = await post('/echo_image_png', 'multipart/form-data; boundary=b0undary', body);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="output.png"');
    expect([...new Uint8Array(await res.arrayBuffer()).subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });
});
