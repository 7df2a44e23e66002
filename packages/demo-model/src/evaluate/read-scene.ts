import {
  BACKGROUNDS,
  COLOURS,
  type ColourName,
  IMAGE_SIZE,
  POSITION_NAMES,
  POSITIONS,
  type PositionName,
  type Rgb,
  SHAPES,
  type ShapeName,
  SIZE_NAMES,
  SIZES,
  type SizeName,
} from '../dataset/attributes.js';
import { insideShape, type RgbPixels } from '../dataset/render.js';

/** What the evaluator sees in a picture; null where it finds no shape at all. */
export interface SceneReading {
  /** Nearest named colour (shape colour or background name) of the border. */
  background: string;
  colour: ColourName | null;
  shape: ShapeName | null;
  position: PositionName | null;
  size: SizeName | null;
}

const ALL_NAMED: [string, Rgb][] = [...Object.entries(BACKGROUNDS), ...Object.entries(COLOURS)];
const SHAPE_COLOURS = Object.entries(COLOURS) as [ColourName, Rgb][];

/** A pixel this far (RGB distance) from the background colour counts as part of the shape. */
const FOREGROUND_DISTANCE = 60;
/** Fewer shape pixels than this: no shape found. */
const MIN_SHAPE_PIXELS = 6;
/** Template grid used to compare a mask with each shape. */
const GRID = 24;

const dist2 = (d: Uint8Array, o: number, c: Rgb) =>
  (d[o] - c[0]) ** 2 + (d[o + 1] - c[1]) ** 2 + (d[o + 2] - c[2]) ** 2;

function nearest<N extends string>(d: Uint8Array, o: number, palette: readonly [N, Rgb][]): N {
  let best = palette[0][0];
  let bestD = Number.POSITIVE_INFINITY;
  for (const [name, c] of palette) {
    const dd = dist2(d, o, c);
    if (dd < bestD) {
      bestD = dd;
      best = name;
    }
  }
  return best;
}

function mostCommon<T>(items: Iterable<T>): T | undefined {
  const counts = new Map<T, number>();
  let best: T | undefined;
  let bestN = 0;
  for (const it of items) {
    const n = (counts.get(it) ?? 0) + 1;
    counts.set(it, n);
    if (n > bestN) {
      bestN = n;
      best = it;
    }
  }
  return best;
}

/** Pixel indices of the largest 4-connected region of `mask`. */
function largestComponent(mask: Uint8Array, n: number): number[] {
  const seen = new Uint8Array(mask.length);
  let best: number[] = [];
  for (let start = 0; start < mask.length; start++) {
    if (!mask[start] || seen[start]) continue;
    const region: number[] = [];
    const stack = [start];
    seen[start] = 1;
    while (stack.length > 0) {
      const p = stack.pop() as number;
      region.push(p);
      const x = p % n;
      const y = (p - x) / n;
      const next = [x > 0 ? p - 1 : -1, x < n - 1 ? p + 1 : -1, y > 0 ? p - n : -1, y < n - 1 ? p + n : -1];
      for (const q of next) {
        if (q >= 0 && mask[q] && !seen[q]) {
          seen[q] = 1;
          stack.push(q);
        }
      }
    }
    if (region.length > best.length) best = region;
  }
  return best;
}

/** Soft coverage of each shape on the template grid (4×4 samples a cell), computed once. */
const TEMPLATES: [ShapeName, Float32Array][] = SHAPES.map((shape) => {
  const t = new Float32Array(GRID * GRID);
  for (let gy = 0; gy < GRID; gy++)
    for (let gx = 0; gx < GRID; gx++) {
      let hits = 0;
      for (let s = 0; s < 16; s++) {
        const u = (gx + ((s % 4) + 0.5) / 4) / GRID - 0.5;
        const v = (gy + (Math.floor(s / 4) + 0.5) / 4) / GRID - 0.5;
        if (insideShape(shape, u, v)) hits++;
      }
      t[gy * GRID + gx] = hits / 16;
    }
  return [shape, t];
});

/** The shape whose template overlaps the mask best (soft IoU), the mask scaled to its bounding square. */
function classifyShape(
  mask: Uint8Array,
  n: number,
  box: { x0: number; y0: number; side: number },
): ShapeName {
  const grid = new Float32Array(GRID * GRID);
  for (let gy = 0; gy < GRID; gy++)
    for (let gx = 0; gx < GRID; gx++) {
      let hits = 0;
      for (let s = 0; s < 4; s++) {
        const x = Math.floor(box.x0 + ((gx + ((s % 2) + 0.5) / 2) / GRID) * box.side);
        const y = Math.floor(box.y0 + ((gy + (Math.floor(s / 2) + 0.5) / 2) / GRID) * box.side);
        if (x >= 0 && y >= 0 && x < n && y < n && mask[y * n + x]) hits++;
      }
      grid[gy * GRID + gx] = hits / 4;
    }
  let best: ShapeName = SHAPES[0];
  let bestIou = -1;
  for (const [shape, t] of TEMPLATES) {
    let inter = 0;
    let union = 0;
    for (let i = 0; i < t.length; i++) {
      inter += Math.min(t[i], grid[i]);
      union += Math.max(t[i], grid[i]);
    }
    const iou = union > 0 ? inter / union : 0;
    if (iou > bestIou) {
      bestIou = iou;
      best = shape;
    }
  }
  return best;
}

function positionOf(cx: number, cy: number): PositionName {
  const third = IMAGE_SIZE / 3;
  const col = Math.min(2, Math.max(0, Math.floor(cx / third)));
  const row = Math.min(2, Math.max(0, Math.floor(cy / third)));
  return POSITION_NAMES.find((p) => POSITIONS[p][0] === col && POSITIONS[p][1] === row) as PositionName;
}

function sizeOf(side: number): SizeName {
  return SIZE_NAMES.reduce((a, b) => (Math.abs(SIZES[b] - side) < Math.abs(SIZES[a] - side) ? b : a));
}

/**
 * Reads a 64×64 picture back into scene attributes, from pixels alone: the background is the commonest
 * named colour of the border; the shape is the largest connected region of pixels far from the background
 * in its commonest shape colour; its position is the centre of that region's bounding box on a 3×3 grid
 * (the box, not the mass centroid, since a triangle's centroid sits low in its box); its class is the
 * template (circle, square, triangle, cross) it overlaps best.
 */
export function readScene(img: RgbPixels): SceneReading {
  const n = img.width;
  if (img.height !== n || img.data.length !== n * n * 3)
    throw new Error('readScene needs a square RGB picture');
  const d = img.data;
  const border: number[] = [];
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) if (i < 2 || j < 2 || i >= n - 2 || j >= n - 2) border.push((i * n + j) * 3);
  const background = mostCommon(border.map((o) => nearest(d, o, ALL_NAMED))) as string;
  const bgPixels = border.filter((o) => nearest(d, o, ALL_NAMED) === background);
  const bg: Rgb = [0, 1, 2].map(
    (c) => bgPixels.reduce((s, o) => s + d[o + c], 0) / bgPixels.length,
  ) as unknown as Rgb;
  const far = FOREGROUND_DISTANCE ** 2;
  const labels: (ColourName | null)[] = [];
  for (let p = 0; p < n * n; p++)
    labels.push(dist2(d, p * 3, bg) > far ? nearest(d, p * 3, SHAPE_COLOURS) : null);
  const colour = mostCommon(labels.filter((l): l is ColourName => l !== null)) ?? null;
  const none: SceneReading = { background, colour: null, shape: null, position: null, size: null };
  if (!colour) return none;
  const mask = new Uint8Array(n * n);
  for (let p = 0; p < n * n; p++) mask[p] = labels[p] === colour ? 1 : 0;
  const region = largestComponent(mask, n);
  if (region.length < MIN_SHAPE_PIXELS) return { ...none, colour };
  const regionMask = new Uint8Array(n * n);
  let [x0, y0, x1, y1] = [n, n, -1, -1];
  for (const p of region) {
    regionMask[p] = 1;
    const x = p % n;
    const y = (p - x) / n;
    x0 = Math.min(x0, x);
    y0 = Math.min(y0, y);
    x1 = Math.max(x1, x);
    y1 = Math.max(y1, y);
  }
  const side = Math.max(x1 - x0 + 1, y1 - y0 + 1);
  const cx = (x0 + x1 + 1) / 2;
  const cy = (y0 + y1 + 1) / 2;
  const shape = classifyShape(regionMask, n, { x0: cx - side / 2, y0: cy - side / 2, side });
  return { background, colour, shape, position: positionOf(cx, cy), size: sizeOf(side) };
}
