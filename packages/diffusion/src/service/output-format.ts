import { TiffinError } from '@tiffin/core';
import sharp from 'sharp';
import { withPngText } from './png-text.js';

/** The image formats a generation API answers in. */
export const OUTPUT_FORMATS = ['jpeg', 'png', 'webp'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The answer's format when neither `output_format` nor `Accept` names one. */
export const DEFAULT_OUTPUT_FORMAT: OutputFormat = 'jpeg';

const MEDIA_TYPES: Readonly<Record<OutputFormat, string>> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
};

/** The media type of `format`. */
export function outputMediaType(format: OutputFormat): string {
  return MEDIA_TYPES[format];
}

/** The client's `Accept` names nothing the API can answer with: 406 `NOT_ACCEPTABLE`. */
export class NotAcceptable extends TiffinError {
  static override readonly code: string = 'NOT_ACCEPTABLE';
  static override readonly httpStatus: number = 406;
}

interface AcceptEntry {
  essence: string;
  q: number;
}

/** `Accept` as media ranges with their weights, best first (ties keep header order); q=0 ranges dropped. */
function acceptEntries(accept: string): AcceptEntry[] {
  const entries: AcceptEntry[] = [];
  // Bounded: a header of thousands of ranges is not a reason to parse them all.
  for (const range of accept.split(',').slice(0, 64)) {
    const [type, ...params] = range.split(';');
    const essence = type.trim().toLowerCase();
    if (!essence) continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=').map((s) => s.trim());
      if (k.toLowerCase() === 'q') q = Number(v);
    }
    if (Number.isFinite(q) && q > 0) entries.push({ essence, q });
  }
  return entries.sort((a, b) => b.q - a.q);
}

/** Whether the media range `essence` admits `format` (several images travel in a multipart answer). */
function admits(essence: string, format: OutputFormat): boolean {
  return (
    essence === MEDIA_TYPES[format] ||
    essence === 'image/*' ||
    essence === '*/*' ||
    essence === 'multipart/mixed' ||
    essence === 'multipart/*'
  );
}

/**
 * The answer's image format: the body's `output_format` when given (a 406 when `Accept` excludes it), else the
 * best image type `Accept` names (`image/*`, `*` or none: JPEG), else a 406 naming what the API makes.
 */
export function negotiateOutputFormat(
  accept: string | null | undefined,
  requested: OutputFormat | null | undefined,
): OutputFormat {
  const entries = accept?.trim() ? acceptEntries(accept) : null;
  const refuse = () =>
    new NotAcceptable(
      `Accept ${JSON.stringify(accept?.slice(0, 200))} names no format this API makes (${OUTPUT_FORMATS.map(outputMediaType).join(', ')})`,
    );
  if (requested) {
    if (entries && !entries.some((e) => admits(e.essence, requested))) throw refuse();
    return requested;
  }
  if (!entries) return DEFAULT_OUTPUT_FORMAT;
  for (const e of entries) {
    const named = OUTPUT_FORMATS.find((f) => MEDIA_TYPES[f] === e.essence);
    if (named) return named;
    if (admits(e.essence, DEFAULT_OUTPUT_FORMAT)) return DEFAULT_OUTPUT_FORMAT;
  }
  throw refuse();
}

/**
 * One RGB uint8 image (HWC) encoded as `format`; `quality` (1–100) for JPEG and WebP, sharp's default 80 else.
 * `infotext` (A1111's generation parameters) goes where A1111 writes it: a PNG's `parameters` text chunk, a JPEG's
 * or WebP's EXIF `UserComment` (written by libvips with the ASCII character code, so characters outside ASCII are
 * transliterated there; the PNG keeps them exactly).
 */
export async function encodeGenerated(
  pixels: Uint8Array,
  width: number,
  height: number,
  format: OutputFormat,
  quality?: number,
  infotext?: string,
): Promise<Buffer> {
  let image = sharp(pixels, { raw: { width, height, channels: 3 } });
  if (infotext && format !== 'png') image = image.withExif({ IFD2: { UserComment: infotext } });
  switch (format) {
    case 'jpeg':
      return image.jpeg(quality === undefined ? {} : { quality }).toBuffer();
    case 'webp':
      return image.webp(quality === undefined ? {} : { quality }).toBuffer();
    case 'png': {
      const png = await image.png().toBuffer();
      return infotext ? withPngText(png, { parameters: infotext }) : png;
    }
  }
}
