import { isUtf8 } from 'node:buffer';
import { BadInput } from '../errors/index.js';

/**
 * Decode a request body as strict UTF-8 (a leading BOM is dropped). Invalid bytes are the client's fault
 * (docs/spec/io-descriptors.md D1): BadInput naming `what` and the offset of the first bad byte.
 */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  // A request body already is a Buffer: no view made over it.
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Decoding replaces each invalid sequence with U+FFFD, so text without one came from valid UTF-8: the strict
  // check (isUtf8, simdutf) runs only when the text has one. V8 finds none in a one-byte string at once.
  const text = buffer.toString('utf8');
  if (text.indexOf('\uFFFD') >= 0 && !isUtf8(buffer)) {
    throw new BadInput(`${what} is not valid UTF-8 (invalid byte at offset ${firstInvalidUtf8(bytes)})`);
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Offset of the first byte that breaks UTF-8 (only called on failure, so speed does not matter). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    let need: number;
    let min: number;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i;
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return bytes.length;
}
