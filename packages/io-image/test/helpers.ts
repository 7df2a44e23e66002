import type { HttpResponse } from '@tiffin/core';
import { BufferedHttpRequest, getHeader, readResponseBody } from '@tiffin/core/internal';
import sharp from 'sharp';

/** Deterministic RGB test pixels: a colour gradient with a pattern, w×h×3 bytes. */
export function gradientRgb(width: number, height: number): Uint8Array {
  const out = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      out[i] = (x * 255) / Math.max(1, width - 1);
      out[i + 1] = (y * 255) / Math.max(1, height - 1);
      out[i + 2] = (x * 7 + y * 13) % 256;
    }
  }
  return out;
}

/**
 * A standard 24-bit bottom-up BMP file (14-byte file header + 40-byte BITMAPINFOHEADER, rows padded to 4
 * bytes), written here independently of the package's encoder: 10×10 gives the 374-byte file of docs/spec/io-descriptors.md §7.
 */
export function standardBmp(width: number, height: number, rgb: Uint8Array): Buffer {
  const rowSize = Math.ceil((width * 3) / 4) * 4;
  const size = 54 + rowSize * height;
  const buf = Buffer.alloc(size);
  buf.write('BM', 0, 'latin1');
  buf.writeUInt32LE(size, 2);
  buf.writeUInt32LE(54, 10);
  buf.writeUInt32LE(40, 14);
  buf.writeInt32LE(width, 18);
  buf.writeInt32LE(height, 22);
  buf.writeUInt16LE(1, 26);
  buf.writeUInt16LE(24, 28);
  buf.writeUInt32LE(rowSize * height, 34);
  for (let y = 0; y < height; y++) {
    const row = 54 + (height - 1 - y) * rowSize;
    for (let x = 0; x < width; x++) {
      const s = (y * width + x) * 3;
      buf[row + x * 3] = rgb[s + 2]!;
      buf[row + x * 3 + 1] = rgb[s + 1]!;
      buf[row + x * 3 + 2] = rgb[s]!;
    }
  }
  return buf;
}

/** The spec's BMP test file: 10×10, 24-bit, 374 bytes. */
export const BMP_10 = standardBmp(10, 10, gradientRgb(10, 10));

export function pngOf(
  rgb: Uint8Array,
  width: number,
  height: number,
  channels: 1 | 2 | 3 | 4 = 3,
): Promise<Buffer> {
  const pipeline = sharp(rgb, { raw: { width, height, channels } });
  return (channels <= 2 ? pipeline.toColourspace('b-w') : pipeline).png().toBuffer();
}

export function request(contentType: string | null, body: Buffer | string): BufferedHttpRequest {
  return new BufferedHttpRequest({
    headers: contentType === null ? {} : { 'content-type': contentType },
    body,
  });
}

export interface FilePart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer | string;
}

/** Build a multipart/form-data body; parts without `filename` are plain fields. */
export function multipartBody(boundary: string, parts: FilePart[]): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.contentType) head += `Content-Type: ${p.contentType}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

export function multipartRequest(parts: FilePart[], boundary = 'tiffinboundary'): BufferedHttpRequest {
  return request(`multipart/form-data; boundary=${boundary}`, multipartBody(boundary, parts));
}

export async function rawPixels(
  encoded: Uint8Array,
): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { data, info } = await sharp(encoded).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

export async function errorOf(
  promise: Promise<unknown>,
): Promise<{ status: number; type: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    const e = err as { httpStatus?: number; name: string; message: string };
    return { status: e.httpStatus ?? 500, type: e.name, message: e.message };
  }
  throw new Error('expected the promise to reject');
}

export { getHeader, type HttpResponse, readResponseBody };
