/**
 * Pixel modes, named as the spec's `pilmode` option names them. A mode decides the channels and the
 * element type of the pixels an API function receives and how a pixel array is turned into an image.
 */
export type PilMode = '1' | 'L' | 'LA' | 'P' | 'RGB' | 'RGBA' | 'CMYK' | 'I' | 'F';

export const PIL_MODES: readonly PilMode[] = ['1', 'CMYK', 'F', 'I', 'L', 'LA', 'P', 'RGB', 'RGBA'];

/** Element type of a mode's pixel array (NDArray dtype names). */
export type PixelDType = 'bool' | 'uint8' | 'int32' | 'float32';

export interface ModeInfo {
  /** Channels per pixel; 1 means the array is H×W. */
  readonly channels: number;
  readonly dtype: PixelDType;
}

export const MODE_INFO: Readonly<Record<PilMode, ModeInfo>> = {
  '1': { channels: 1, dtype: 'bool' },
  L: { channels: 1, dtype: 'uint8' },
  LA: { channels: 2, dtype: 'uint8' },
  P: { channels: 1, dtype: 'uint8' },
  RGB: { channels: 3, dtype: 'uint8' },
  RGBA: { channels: 4, dtype: 'uint8' },
  CMYK: { channels: 4, dtype: 'uint8' },
  I: { channels: 1, dtype: 'int32' },
  F: { channels: 1, dtype: 'float32' },
};

export function isPilMode(value: unknown): value is PilMode {
  return typeof value === 'string' && (PIL_MODES as readonly string[]).includes(value);
}
