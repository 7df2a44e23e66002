import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { cannyEdges } from '../../../src/service/controlnet/canny.js';
import { base64Bytes, controlnetRequest } from '../../../src/service/controlnet/controlnet-request.js';
import { controlnetField } from '../../../src/service/controlnet/controlnet-schema.js';
import { resizeLanczos } from '../../../src/service/lanczos-resize.js';

/** A 40×24 RGB picture with a bright square on dark: edges a Canny map finds. */
function picture(width = 40, height = 24): Uint8Array {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const inside = x >= 10 && x < 30 && y >= 6 && y < 18;
      data.set(inside ? [230, 200, 40] : [20, 30 + x, 60 + y], 3 * (y * width + x));
    }
  return data;
}
const png = async (width = 40, height = 24) =>
  (
    await sharp(picture(width, height), { raw: { width, height, channels: 3 } })
      .png()
      .toBuffer()
  ).toString('base64');

const context = { names: ['edges', 'depth'], maxPixels: 4096 * 4096 };
const parse = (units: unknown[]) => controlnetField(4).parse(units) ?? [];

describe('controlnet units of a request', () => {
  it('fills in the defaults: module none, scale 1, the whole schedule, balanced, stretched at the size, Canny 100/200', () => {
    const [unit] = parse([{ model: 'edges', image: 'AAAA' }]);
    expect(unit).toEqual({
      model: 'edges',
      image: 'AAAA',
      module: 'none',
      conditioning_scale: 1,
      guidance_start: 0,
      guidance_end: 1,
      guess_mode: false,
      control_mode: 'balanced',
      resize_mode: 'just_resize',
      processor_res: null,
      low_threshold: 100,
      high_threshold: 200,
    });
  });

  it('refuses more units than allowed, an unknown module, a window that ends before it starts', () => {
    const one = { model: 'edges', image: 'AAAA' };
    expect(controlnetField(2).safeParse([one, one, one]).success).toBe(false);
    expect(controlnetField(2).safeParse([{ ...one, module: 'depth_midas' }]).success).toBe(false);
    const window = controlnetField(2).safeParse([{ ...one, guidance_start: 0.6, guidance_end: 0.2 }]);
    expect(window.success).toBe(false);
    expect(window.error?.issues[0].path).toEqual([0, 'guidance_end']);
    expect(controlnetField(2).safeParse([{ ...one, conditioning_scale: -1 }]).success).toBe(false);
    expect(controlnetField(2).safeParse([{ ...one, control_mode: 'loud' }]).success).toBe(false);
    expect(controlnetField(2).safeParse([{ ...one, resize_mode: 'envelope' }]).success).toBe(false);
    expect(controlnetField(2).safeParse([{ ...one, processor_res: 32 }]).success).toBe(false);
    expect(controlnetField(2).safeParse([{ ...one, processor_res: 64.5 }]).success).toBe(false);
  });

  it('names the field of an unknown model, a service without ControlNets, and bytes that are no base64', () => {
    const units = parse([
      { model: 'edges', image: 'AAAA' },
      { model: 'pose', image: 'AAAA' },
    ]);
    expect(() => controlnetRequest(units, context, 64, 64)).toThrow(
      /^controlnet\[1\]\.model: unknown ControlNet "pose" \(this service has edges, depth\)/,
    );
    expect(() => controlnetRequest(units, { ...context, names: [] }, 64, 64)).toThrow(
      /^controlnet: this service has no ControlNet loaded/,
    );
    for (const bad of ['', 'not base64!', 'data:image/png;base64,', '€€€'])
      expect(() => base64Bytes(bad, 'controlnet[0].image'), bad).toThrow(
        /^controlnet\[0\]\.image must be a base64/,
      );
    expect(controlnetRequest([], context, 64, 64)).toBeUndefined();
    expect(controlnetRequest(null, context, 64, 64)).toBeUndefined();
  });

  it('answers a non-image and an image too large with codes, when the request is admitted', async () => {
    const notImage = controlnetRequest(
      parse([{ model: 'edges', image: Buffer.from('plain text, not a picture').toString('base64') }]),
      context,
      64,
      64,
    );
    await expect(notImage?.()).rejects.toMatchObject({
      code: 'INVALID_IMAGE',
      message: expect.stringMatching(/^controlnet\[0\]\.image is not a PNG, JPEG or WebP image/),
    });
    const large = controlnetRequest(
      parse([{ model: 'depth', image: await png() }]),
      { ...context, maxPixels: 100 },
      64,
      64,
    );
    await expect(large?.()).rejects.toMatchObject({ code: 'IMAGE_TOO_LARGE' });
  });

  it("resizes the map to the generation's size (Pillow's Lanczos) and runs Canny there, as a data: URL too", async () => {
    const pending = controlnetRequest(
      parse([
        { model: 'depth', image: await png(), conditioning_scale: 0.5, guidance_end: 0.8 },
        { model: 'edges', image: `data:image/png;base64,${await png()}`, module: 'canny', low_threshold: 50 },
        { model: 'edges', image: await png(), module: 'canny', guess_mode: true },
      ]),
      context,
      64,
      48,
    );
    const [map, edges, sameSize] = (await pending?.()) ?? [];
    const resized = resizeLanczos({ width: 40, height: 24, data: picture() }, 64, 48);
    expect(map).toMatchObject({
      model: 'depth',
      conditioning_scale: 0.5,
      guidance_start: 0,
      guidance_end: 0.8,
    });
    expect(map.image).toEqual(resized);
    expect(edges.image).toEqual(cannyEdges(resized, 50, 200));
    expect(edges.image.data.some((v) => v === 255)).toBe(true);
    expect(sameSize.guess_mode).toBe(true);
    // At the picture's own size nothing is resampled: the edges of the picture itself.
    const own = await controlnetRequest(
      parse([{ model: 'edges', image: await png(), module: 'canny' }]),
      context,
      40,
      24,
    )?.();
    expect(own?.[0].image).toEqual(cannyEdges({ width: 40, height: 24, data: picture() }));
  });
});
