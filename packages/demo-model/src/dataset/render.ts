import {
  BACKGROUNDS,
  COLOURS,
  IMAGE_SIZE,
  POSITIONS,
  type SceneSpec,
  type ShapeName,
  SIZES,
} from './attributes.js';

/** An RGB image, row-major, 3 bytes a pixel. */
export interface RgbPixels {
  width: number;
  height: number;
  data: Uint8Array;
}

/** A rendered scene: the picture and the shape's coverage of each pixel (0..255). */
export interface RenderedScene extends RgbPixels {
  coverage: Uint8Array;
}

/** Small random offsets a training picture may carry (the held-out prompts use none). */
export interface Jitter {
  /** Pixels added to the centre. */
  dx: number;
  dy: number;
  /** Pixels added to the size. */
  ds: number;
}

const NO_JITTER: Jitter = { dx: 0, dy: 0, ds: 0 };

/** Largest |dx|, |dy|, |ds| a training picture uses: keeps every centre inside its third of the image. */
export const MAX_JITTER = 2;

/** Whether the point (u, v), relative to the centre and in units of the bounding square's side, is inside. */
export function insideShape(shape: ShapeName, u: number, v: number): boolean {
  const au = Math.abs(u);
  const av = Math.abs(v);
  switch (shape) {
    case 'circle':
      return u * u + v * v <= 0.25;
    case 'square':
      return au <= 0.5 && av <= 0.5;
    case 'triangle':
      // Apex at the top centre, base along the bottom edge.
      return v >= -0.5 && v <= 0.5 && au <= (v + 0.5) / 2;
    case 'cross':
      return (au <= 1 / 6 && av <= 0.5) || (av <= 1 / 6 && au <= 0.5);
  }
}

/** Centre of a position's cell for a given shape side: a margin of side/2 + 2 px keeps the shape inside. */
export function positionCentre(position: SceneSpec['position'], side: number): [number, number] {
  const [col, row] = POSITIONS[position];
  const margin = side / 2 + 2;
  const at = (i: number) => (i === 0 ? margin : i === 1 ? IMAGE_SIZE / 2 : IMAGE_SIZE - margin);
  return [at(col), at(row)];
}

const SUPERSAMPLE = 4;

/** Draws a scene with 4×4 supersampled anti-aliasing; deterministic. */
export function renderScene(spec: SceneSpec, jitter: Jitter = NO_JITTER): RenderedScene {
  const n = IMAGE_SIZE;
  const side = SIZES[spec.size] + jitter.ds;
  const [cx0, cy0] = positionCentre(spec.position, SIZES[spec.size]);
  const cx = cx0 + jitter.dx;
  const cy = cy0 + jitter.dy;
  const bg = BACKGROUNDS[spec.background];
  const fg = COLOURS[spec.colour];
  const data = new Uint8Array(n * n * 3);
  const coverage = new Uint8Array(n * n);
  const step = 1 / SUPERSAMPLE;
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      let hits = 0;
      for (let sy = 0; sy < SUPERSAMPLE; sy++) {
        for (let sx = 0; sx < SUPERSAMPLE; sx++) {
          const px = x + (sx + 0.5) * step;
          const py = y + (sy + 0.5) * step;
          if (insideShape(spec.shape, (px - cx) / side, (py - cy) / side)) hits++;
        }
      }
      const a = hits / (SUPERSAMPLE * SUPERSAMPLE);
      coverage[y * n + x] = Math.round(a * 255);
      const o = (y * n + x) * 3;
      for (let c = 0; c < 3; c++) data[o + c] = Math.round(bg[c] * (1 - a) + fg[c] * a);
    }
  }
  return { width: n, height: n, data, coverage };
}
