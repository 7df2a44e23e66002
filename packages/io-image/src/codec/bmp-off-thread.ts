import { siblingModule, TaskPool } from '@tiffin/core/descriptor';
import sharp from 'sharp';
import type { DecodedBmp } from './bmp.js';
import type { BmpPixels } from './bmp-thread.js';

/*
 * BMP decoding off the event loop. libvips cannot read BMP, so bmp-ts (plain JavaScript) decodes it: run on the
 * main thread, one 9456×9456 RLE file held the loop for 0.6 s. Here bmp-ts runs in core's task
 * threads (a few, reused: bmp-thread.ts), and the per-pixel work after it (the alpha test, RGBA → RGB) is
 * sharp's, on libuv's pool.
 */

let pool: TaskPool | undefined;

/**
 * Decode a BMP file to interleaved 8-bit RGB or RGBA, as `decodeBmp` does, without holding the event loop.
 * Call `readBmpHeader` and `assertBmpCarriesPixels` first to bound the size.
 */
export async function decodeBmpOffThread(bytes: Uint8Array): Promise<DecodedBmp> {
  pool ??= new TaskPool({ name: 'BMP decoding', module: siblingModule(import.meta.url, 'bmp-thread') });
  // bmp-ts fails with Node's own buffer messages (offsets, sizes): the client gets one of ours.
  const answer = await pool.run<BmpPixels>('decodeBmp', [bytes]).catch(() => {
    throw new Error('BMP pixel data is malformed or truncated');
  });
  const { width, height, bitPP } = answer;
  const n = width * height;
  if (answer.data.length < n * 4) throw new Error('truncated BMP pixel data');
  const rgba = Buffer.from(answer.data.buffer, answer.data.byteOffset, n * 4);
  const raw = () => sharp(rgba, { raw: { width, height, channels: 4 }, limitInputPixels: false });
  // Only 32-bit files can carry alpha; one whose fourth byte is all 0 or all 255 is plain RGB.
  if (bitPP === 32) {
    const alpha = (await raw().stats()).channels[3]!;
    if (alpha.min !== 255 && alpha.max !== 0) return { width, height, channels: 4, data: rgba };
  }
  const rgb = await raw().removeAlpha().raw().toBuffer();
  return { width, height, channels: 3, data: new Uint8Array(rgb.buffer, rgb.byteOffset, rgb.byteLength) };
}
