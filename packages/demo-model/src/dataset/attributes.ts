/** The words of the demo dataset: every caption is built from these lists, and the evaluator reads them back. */

export type Rgb = readonly [number, number, number];

/** Image side in pixels (the UNet's 16×16 latents × the VAE's factor 4). */
export const IMAGE_SIZE = 64;

export const SHAPES = ['circle', 'square', 'triangle', 'cross'] as const;
export type ShapeName = (typeof SHAPES)[number];

/** Shape colours: hues far apart so the nearest named colour is unambiguous. */
export const COLOURS = {
  red: [220, 30, 30],
  orange: [255, 140, 0],
  yellow: [250, 220, 20],
  green: [30, 170, 50],
  cyan: [0, 200, 220],
  blue: [30, 70, 220],
  purple: [140, 50, 190],
  pink: [255, 120, 200],
} as const satisfies Record<string, Rgb>;
export type ColourName = keyof typeof COLOURS;
export const COLOUR_NAMES = Object.keys(COLOURS) as ColourName[];

export const BACKGROUNDS = {
  white: [255, 255, 255],
  black: [0, 0, 0],
  grey: [128, 128, 128],
} as const satisfies Record<string, Rgb>;
export type BackgroundName = keyof typeof BACKGROUNDS;
export const BACKGROUND_NAMES = Object.keys(BACKGROUNDS) as BackgroundName[];

/** Side of the shape's bounding square in pixels. */
export const SIZES = { small: 16, medium: 24, large: 34 } as const;
export type SizeName = keyof typeof SIZES;
export const SIZE_NAMES = Object.keys(SIZES) as SizeName[];

/** A 3×3 grid: column and row 0 (left/top), 1 (centre), 2 (right/bottom). */
export const POSITIONS = {
  'top left': [0, 0],
  top: [1, 0],
  'top right': [2, 0],
  left: [0, 1],
  centre: [1, 1],
  right: [2, 1],
  'bottom left': [0, 2],
  bottom: [1, 2],
  'bottom right': [2, 2],
} as const satisfies Record<string, readonly [number, number]>;
export type PositionName = keyof typeof POSITIONS;
export const POSITION_NAMES = Object.keys(POSITIONS) as PositionName[];

/** How a caption says where the shape is ("at the top left", "on the left", "in the centre"). */
export function positionPhrase(p: PositionName): string {
  if (p === 'centre') return 'in the centre';
  if (p === 'left' || p === 'right') return `on the ${p}`;
  return `at the ${p}`;
}

/** One picture's content. */
export interface SceneSpec {
  shape: ShapeName;
  colour: ColourName;
  size: SizeName;
  position: PositionName;
  background: BackgroundName;
}

/** "a small red circle at the top left on a white background". */
export function caption(s: SceneSpec): string {
  return `a ${s.size} ${s.colour} ${s.shape} ${positionPhrase(s.position)} on a ${s.background} background`;
}
