import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { unetWeightSpecs } from '../../src/architectures/unet.js';
import type { UNetConfig } from '../../src/architectures/unet-config.js';
import { tinyConfigs } from '../../src/tiny/tiny-configs.js';
import { detInput } from '../../src/weights/deterministic.js';
import { type TensorToWrite, writeSafetensors } from '../../src/weights/safetensors.js';

/** Width and height from a JPEG's start-of-frame marker. */
export function jpegSize(bytes: Uint8Array): { width: number; height: number } {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) throw new Error('not a JPEG');
  let i = 2;
  while (i < bytes.length) {
    if (bytes[i] !== 0xff) throw new Error(`bad JPEG marker at ${i}`);
    const marker = bytes[i + 1];
    const length = (bytes[i + 2] << 8) | bytes[i + 3];
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: (bytes[i + 5] << 8) | bytes[i + 6], width: (bytes[i + 7] << 8) | bytes[i + 8] };
    }
    i += 2 + length;
  }
  throw new Error('no JPEG frame header');
}

/** A PEFT-layout LoRA (rank 2) on every attention projection of the tiny sd1 UNet, strong enough to show. */
export function writeTinyLora(
  dir: string,
  name: string,
  salt: string,
  unet: UNetConfig = tinyConfigs('sd1').unet as unknown as UNetConfig,
): string {
  mkdirSync(dir, { recursive: true });
  const tensors: Record<string, TensorToWrite> = {};
  for (const spec of unetWeightSpecs(unet)) {
    if (!/\.attn[12]\.to_[qkv]\.weight$/.test(spec.name) || spec.shape.length !== 2) continue;
    const [out, inner] = spec.shape;
    const key = `unet.${spec.name.slice(0, -'.weight'.length)}`;
    tensors[`${key}.lora_A.weight`] = {
      shape: [2, inner],
      data: detInput(`${salt}/${key}/A`, [2, inner], 0.8),
    };
    tensors[`${key}.lora_B.weight`] = { shape: [out, 2], data: detInput(`${salt}/${key}/B`, [out, 2], 0.8) };
  }
  if (Object.keys(tensors).length === 0) throw new Error('the tiny UNet has no attention projections');
  const path = join(dir, name);
  writeSafetensors(path, tensors);
  return path;
}

/** `tiffin_api_server_generations_cancelled_total{reason}` as the server at `baseUrl` serves it (0 when absent). */
export async function cancelledCount(baseUrl: string, reason: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('tiffin_api_server_generations_cancelled_total{') && l.includes(`reason="${reason}"`),
    );
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** A PNG's image data (its IDAT chunks joined), to compare pixels whatever text chunks (infotext) it carries. */
export function pngImageData(bytes: Uint8Array): Buffer {
  const png = Buffer.from(bytes);
  const parts: Buffer[] = [];
  for (let at = 8; at + 8 <= png.length; ) {
    const length = png.readUInt32BE(at);
    if (png.toString('latin1', at + 4, at + 8) === 'IDAT') parts.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  return Buffer.concat(parts);
}
