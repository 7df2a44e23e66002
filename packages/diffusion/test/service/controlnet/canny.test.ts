import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CANNY_MAX_PIXELS, cannyEdges } from '../../../src/service/controlnet/canny.js';

/** OpenCV's own edge maps, written by `reference/canny_reference.py` (its provenance line names the version). */
interface CannyCase {
  name: string;
  width: number;
  height: number;
  low: number;
  high: number;
  rgb?: string;
  rgbOf?: string;
  edges: string;
  edgePixels: number;
}
const FIXTURE = JSON.parse(
  readFileSync(new URL('../../fixtures/controlnet/canny.json', import.meta.url), 'utf8'),
) as { provenance: string; cases: CannyCase[] };

const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, 'base64'));
const pictures = new Map(FIXTURE.cases.filter((c) => c.rgb).map((c) => [c.name, bytes(c.rgb as string)]));

describe('cannyEdges', () => {
  it.each(FIXTURE.cases)('$name: the same edge map as OpenCV, pixel for pixel', (c) => {
    const data = pictures.get(c.rgbOf ?? c.name) as Uint8Array;
    const edges = cannyEdges({ width: c.width, height: c.height, data }, c.low, c.high);
    expect([edges.width, edges.height]).toEqual([c.width, c.height]);
    const expected = bytes(c.edges);
    let differing = 0;
    let notGrey = 0;
    for (let i = 0; i < expected.length; i++) {
      const [r, g, b] = edges.data.subarray(3 * i, 3 * i + 3);
      // A 3-channel 0/255 map, the same value in every channel.
      if (r !== g || g !== b || (r !== 0 && r !== 255)) notGrey++;
      if (r !== expected[i]) differing++;
    }
    expect({ differing, notGrey }).toEqual({ differing: 0, notGrey: 0 });
    expect(expected.filter((v) => v === 255).length).toBe(c.edgePixels);
  });

  it('finds edges in the pictures that have some (the fixture is not all black)', () => {
    expect(FIXTURE.cases.filter((c) => c.edgePixels > 100).length).toBeGreaterThan(5);
  });

  it('refuses sizes it cannot hold before allocating, and data of the wrong length', () => {
    const empty = new Uint8Array(0);
    expect(() => cannyEdges({ width: 0, height: 4, data: empty })).toThrow(RangeError);
    expect(() => cannyEdges({ width: 1.5, height: 4, data: empty })).toThrow(RangeError);
    expect(() => cannyEdges({ width: CANNY_MAX_PIXELS, height: 2, data: empty })).toThrow(/at most/);
    expect(() => cannyEdges({ width: 2, height: 2, data: new Uint8Array(11) })).toThrow(/12 bytes/);
    expect(() => cannyEdges({ width: 1, height: 1, data: new Uint8Array(3) }, Number.NaN, 1)).toThrow(
      /finite/,
    );
  });

  it('any picture and thresholds: a 0/255 map of its size, the same with the thresholds swapped, none above 2040', () => {
    const picture = fc
      .record({ width: fc.integer({ min: 1, max: 9 }), height: fc.integer({ min: 1, max: 9 }) })
      .chain(({ width, height }) =>
        fc
          .uint8Array({ minLength: width * height * 3, maxLength: width * height * 3 })
          .map((data) => ({ width, height, data })),
      );
    const threshold = fc.double({ min: -10, max: 3000, noNaN: true });
    fc.assert(
      fc.property(picture, threshold, threshold, (image, a, b) => {
        const edges = cannyEdges(image, a, b);
        expect([edges.width, edges.height, edges.data.length]).toEqual([
          image.width,
          image.height,
          image.data.length,
        ]);
        expect(edges.data.every((v) => v === 0 || v === 255)).toBe(true);
        expect(cannyEdges(image, b, a).data).toEqual(edges.data);
        // The L1 magnitude of a 3×3 Sobel on 8-bit values is at most 2 × 4 × 255: nothing passes a higher threshold.
        expect(cannyEdges(image, 2040, 2041).data.every((v) => v === 0)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
