import { crc32, inflateSync } from 'node:zlib';
import { UnprocessableEntity } from '@tiffin/core';

/**
 * PNG text chunks (the PNG specification's tEXt, zTXt and iTXt): written into the PNGs the services answer
 * (A1111's `parameters` infotext) and read back from a client's PNG (A1111's `png-info`). The one place PNG
 * chunks are written or read; sharp encodes the pixels.
 */

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Bounds on what a client's PNG may make the reader do: chunks walked, text kept, inflated bytes. */
export interface PngTextLimits {
  maxChunks: number;
  maxTextBytes: number;
}

export const PNG_TEXT_LIMITS: PngTextLimits = { maxChunks: 4096, maxTextBytes: 1024 * 1024 };

/** ASCII text reads the same whether a reader takes tEXt as Latin-1 (the PNG specification) or UTF-8 (libvips). */
function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])));
  return Buffer.concat([head, data, crc]);
}

/** One text entry as a chunk: tEXt when the text is ASCII, else uncompressed UTF-8 iTXt, which every reader decodes alike. */
function textChunk(keyword: string, text: string): Buffer {
  const key = Buffer.from(keyword, 'latin1');
  if (isAscii(text))
    return chunk('tEXt', Buffer.concat([key, Buffer.from([0]), Buffer.from(text, 'latin1')]));
  // keyword NUL, compression flag 0, method 0, empty language tag NUL, empty translated keyword NUL, text.
  return chunk('iTXt', Buffer.concat([key, Buffer.from([0, 0, 0, 0, 0]), Buffer.from(text, 'utf8')]));
}

/** `png` (as sharp wrote it) with `entries` as text chunks right after its IHDR. */
export function withPngText(png: Buffer, entries: Readonly<Record<string, string>>): Buffer {
  if (png.length < 33 || !png.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  const ihdrEnd = 8 + 12 + png.readUInt32BE(8);
  const chunks = Object.entries(entries).map(([k, v]) => textChunk(k, v));
  return Buffer.concat([png.subarray(0, ihdrEnd), ...chunks, png.subarray(ihdrEnd)]);
}

/** Whether `bytes` begin with the PNG signature. */
export function isPng(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && Buffer.from(bytes.buffer, bytes.byteOffset, 8).equals(SIGNATURE);
}

const refuse = (why: string) => new UnprocessableEntity(`The PNG ${why}`);

function inflated(data: Buffer, left: number): Buffer {
  try {
    return inflateSync(data, { maxOutputLength: Math.max(1, left) });
  } catch {
    throw refuse(
      `has a compressed text chunk that is corrupt or inflates past ${PNG_TEXT_LIMITS.maxTextBytes} bytes`,
    );
  }
}

/** One text chunk's keyword and text; `left` is the text budget still unspent. */
function readText(type: string, data: Buffer, left: number): [string, string] | undefined {
  const nul = data.indexOf(0);
  if (nul < 1 || nul > 79) throw refuse(`has a ${type} chunk without a keyword`);
  const keyword = data.toString('latin1', 0, nul);
  if (type === 'tEXt') return [keyword, data.toString('latin1', nul + 1)];
  if (type === 'zTXt') return [keyword, inflated(data.subarray(nul + 2), left).toString('latin1')];
  // iTXt: compression flag, method, language tag NUL, translated keyword NUL, text.
  const compressed = data[nul + 1] === 1;
  const lang = data.indexOf(0, nul + 3);
  const translated = lang < 0 ? -1 : data.indexOf(0, lang + 1);
  if (translated < 0) throw refuse('has a malformed iTXt chunk');
  const body = data.subarray(translated + 1);
  return [keyword, (compressed ? inflated(body, left) : body).toString('utf8')];
}

/**
 * The text chunks of a client's PNG, keyword → text (the first of a keyword wins). Bounded: at most
 * `limits.maxChunks` chunks walked and `limits.maxTextBytes` of text kept (compressed text inflated within that
 * budget); a PNG that is truncated, declares a chunk past its end or breaks a bound is a 422.
 */
export function readPngText(
  bytes: Uint8Array,
  limits: PngTextLimits = PNG_TEXT_LIMITS,
): Record<string, string> {
  const png = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!isPng(png)) throw refuse('signature is missing: this is not a PNG');
  const texts = new Map<string, string>();
  let offset = 8;
  let textBytes = 0;
  for (let n = 0; offset < png.length; n++) {
    if (n >= limits.maxChunks) throw refuse(`has more than ${limits.maxChunks} chunks`);
    if (offset + 12 > png.length) throw refuse('is truncated');
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    if (length > png.length - offset - 12) throw refuse(`declares a ${length}-byte chunk past its end`);
    const data = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IEND') break;
    if (type === 'tEXt' || type === 'zTXt' || type === 'iTXt') {
      textBytes += length;
      if (textBytes > limits.maxTextBytes)
        throw refuse(`holds more than ${limits.maxTextBytes} bytes of text`);
      const entry = readText(type, data, limits.maxTextBytes - textBytes + length);
      if (entry && !texts.has(entry[0])) texts.set(entry[0], entry[1]);
    }
    offset += 12 + length;
  }
  // fromEntries defines own properties: a `__proto__` keyword stays a key.
  return Object.fromEntries(texts);
}
