import type { PilMode } from '../modes.js';
import type { PixelData, Pixels } from './pixels.js';

/*
 * Conversions between 8-bit RGB(A) and the other modes. The formulas are the ones the reference's imaging
 * library uses (ITU-R 601-2 luma in 16.16 fixed point, naive RGB<->CMYK), so pixel values match it;
 * '1' thresholds at 128 (no dithering) and 'P' maps to a fixed 216-colour web palette (no dithering).
 */

/** ITU-R 601-2 luma, rounded, as an integer 0..255. */
function luma(r: number, g: number, b: number): number {
  return (r * 19595 + g * 38470 + b * 7471 + 0x8000) >>> 16;
}

/** The fixed palette mode 'P' uses: 6 levels per channel, index = r*36 + g*6 + b. */
export const WEB_PALETTE: Uint8Array = (() => {
  const palette = new Uint8Array(216 * 3);
  for (let i = 0; i < 216; i++) {
    palette[i * 3] = Math.floor(i / 36) * 51;
    palette[i * 3 + 1] = (Math.floor(i / 6) % 6) * 51;
    palette[i * 3 + 2] = (i % 6) * 51;
  }
  return palette;
})();

/**
 * Convert interleaved 8-bit RGB (3 channels) or RGBA (4 channels) pixels to `mode`.
 * 'RGB' drops alpha; 'RGBA' adds an opaque alpha when there is none.
 */
export function fromRgb(
  rgb: Uint8Array,
  channels: 3 | 4,
  width: number,
  height: number,
  mode: PilMode,
): Pixels {
  const n = width * height;
  const at = (i: number) => i * channels;
  const base = { width, height, mode };
  switch (mode) {
    case 'RGB': {
      if (channels === 3) return { ...base, data: rgb };
      const out = new Uint8Array(n * 3);
      for (let i = 0; i < n; i++) {
        out[i * 3] = rgb[at(i)]!;
        out[i * 3 + 1] = rgb[at(i) + 1]!;
        out[i * 3 + 2] = rgb[at(i) + 2]!;
      }
      return { ...base, data: out };
    }
    case 'RGBA': {
      if (channels === 4) return { ...base, data: rgb };
      const out = new Uint8Array(n * 4);
      for (let i = 0; i < n; i++) {
        out[i * 4] = rgb[at(i)]!;
        out[i * 4 + 1] = rgb[at(i) + 1]!;
        out[i * 4 + 2] = rgb[at(i) + 2]!;
        out[i * 4 + 3] = 255;
      }
      return { ...base, data: out };
    }
    case 'L':
    case '1':
    case 'I': {
      const out = mode === 'I' ? new Int32Array(n) : new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const l = luma(rgb[at(i)]!, rgb[at(i) + 1]!, rgb[at(i) + 2]!);
        out[i] = mode === '1' ? (l >= 128 ? 1 : 0) : l;
      }
      return { ...base, data: out };
    }
    case 'LA': {
      const out = new Uint8Array(n * 2);
      for (let i = 0; i < n; i++) {
        out[i * 2] = luma(rgb[at(i)]!, rgb[at(i) + 1]!, rgb[at(i) + 2]!);
        out[i * 2 + 1] = channels === 4 ? rgb[at(i) + 3]! : 255;
      }
      return { ...base, data: out };
    }
    case 'F': {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        out[i] = rgb[at(i)]! * 0.299 + rgb[at(i) + 1]! * 0.587 + rgb[at(i) + 2]! * 0.114;
      }
      return { ...base, data: out };
    }
    case 'P': {
      const out = new Uint8Array(n);
      const level = (v: number) => Math.round(v / 51);
      for (let i = 0; i < n; i++) {
        out[i] = level(rgb[at(i)]!) * 36 + level(rgb[at(i) + 1]!) * 6 + level(rgb[at(i) + 2]!);
      }
      return { ...base, data: out, palette: WEB_PALETTE };
    }
    case 'CMYK': {
      const out = new Uint8Array(n * 4);
      for (let i = 0; i < n; i++) {
        out[i * 4] = 255 - rgb[at(i)]!;
        out[i * 4 + 1] = 255 - rgb[at(i) + 1]!;
        out[i * 4 + 2] = 255 - rgb[at(i) + 2]!;
        out[i * 4 + 3] = 0;
      }
      return { ...base, data: out };
    }
  }
}

const clampByte = (v: number) => (v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v));

/**
 * The bytes and channel count sharp should read for `pixels` as raw input: 1 (grey), 2 (grey+alpha),
 * 3 (RGB) or 4 (RGBA). '1' becomes 0/255 grey, 'I'/'F' are clamped to 0..255, 'P' and 'CMYK' become RGB.
 */
export function toSharpRaw(pixels: Pixels): { data: Uint8Array; channels: 1 | 2 | 3 | 4 } {
  const { data, mode } = pixels;
  const n = pixels.width * pixels.height;
  switch (mode) {
    case 'RGB':
      return { data: data as Uint8Array, channels: 3 };
    case 'RGBA':
      return { data: data as Uint8Array, channels: 4 };
    case 'L':
      return { data: data as Uint8Array, channels: 1 };
    case 'LA':
      return { data: data as Uint8Array, channels: 2 };
    case '1':
      return { data: (data as Uint8Array).map((v) => (v ? 255 : 0)), channels: 1 };
    case 'I':
    case 'F': {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = clampByte(data[i]!);
      return { data: out, channels: 1 };
    }
    case 'P': {
      const palette = pixels.palette ?? WEB_PALETTE;
      const out = new Uint8Array(n * 3);
      for (let i = 0; i < n; i++) {
        const p = data[i]! * 3;
        out[i * 3] = palette[p] ?? 0;
        out[i * 3 + 1] = palette[p + 1] ?? 0;
        out[i * 3 + 2] = palette[p + 2] ?? 0;
      }
      return { data: out, channels: 3 };
    }
    case 'CMYK': {
      const out = new Uint8Array(n * 3);
      for (let i = 0; i < n; i++) {
        const k = 255 - data[i * 4 + 3]!;
        for (let c = 0; c < 3; c++) out[i * 3 + c] = clampByte(((255 - data[i * 4 + c]!) * k) / 255);
      }
      return { data: out, channels: 3 };
    }
  }
}

export type { PixelData };
