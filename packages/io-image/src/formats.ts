/**
 * The image formats this package reads and writes (docs/spec/io-descriptors.md §7.1, with the decision that BMP is a real BMP
 * file, docs/spec/io-descriptors.md D10). sharp handles every format but BMP, which goes through the BMP codec in `codec/bmp.ts`.
 */
export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'avif' | 'tiff' | 'gif' | 'bmp';

export interface FormatInfo {
  readonly format: ImageFormat;
  readonly mimeType: string;
  /** File extension used in `content-disposition: attachment; filename="output.<ext>"`. */
  readonly extension: string;
}

const FORMATS: readonly FormatInfo[] = [
  { format: 'jpeg', mimeType: 'image/jpeg', extension: 'jpeg' },
  { format: 'png', mimeType: 'image/png', extension: 'png' },
  { format: 'bmp', mimeType: 'image/bmp', extension: 'bmp' },
  { format: 'gif', mimeType: 'image/gif', extension: 'gif' },
  { format: 'tiff', mimeType: 'image/tiff', extension: 'tiff' },
  { format: 'webp', mimeType: 'image/webp', extension: 'webp' },
  { format: 'avif', mimeType: 'image/avif', extension: 'avif' },
];

/** MIME types that can be both decoded and encoded, in table order. */
export const SUPPORTED_MIME_TYPES: readonly string[] = FORMATS.map((f) => f.mimeType);

/** Other spellings some clients and sniffers use for a supported type. */
const MIME_ALIASES: Readonly<Record<string, string>> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'image/x-ms-bmp': 'image/bmp',
  'image/x-bmp': 'image/bmp',
  'image/x-png': 'image/png',
};

/** The canonical supported MIME type for `mime`, or undefined. */
export function canonicalMimeType(mime: string): string | undefined {
  const lower = mime.trim().toLowerCase();
  const canonical = MIME_ALIASES[lower] ?? lower;
  return SUPPORTED_MIME_TYPES.includes(canonical) ? canonical : undefined;
}

export function formatForMimeType(mime: string): FormatInfo | undefined {
  const canonical = canonicalMimeType(mime);
  return canonical === undefined ? undefined : FORMATS.find((f) => f.mimeType === canonical);
}
