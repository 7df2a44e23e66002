/**
 * Decode + resize + JPEG-encode of a 1024×1024 photo-like JPEG, through the Image descriptor and through a
 * plain sharp pipeline, against Pillow doing the same (LANCZOS, quality 80) in the same run.
 * Run: `pnpm bench` (or `pnpm --filter @tiffin/io-image bench`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BufferedHttpRequest, readResponseBody } from '@tiffin/core/internal';
import sharp from 'sharp';
import { Image } from '../src/index.js';

const SIZE = 1024;
const TARGET = 512;
const ITERATIONS = 40;

/** A photo-like image: smooth gradients, large soft shapes and fine noise (so JPEG has real work). */
async function photoLikeJpeg(): Promise<Buffer> {
  const rgb = Buffer.alloc(SIZE * SIZE * 3);
  let seed = 12345;
  const noise = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return (seed / 0x7fffffff - 0.5) * 24;
  };
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      const i = (y * SIZE + x) * 3;
      const d = Math.hypot(x - 400, y - 600) / 500;
      rgb[i] = Math.max(0, Math.min(255, 180 - d * 120 + 40 * Math.sin(x / 37) + noise()));
      rgb[i + 1] = Math.max(0, Math.min(255, 90 + (y / SIZE) * 120 + 30 * Math.cos(y / 23) + noise()));
      rgb[i + 2] = Math.max(0, Math.min(255, 60 + (x / SIZE) * 150 - d * 40 + noise()));
    }
  }
  return sharp(rgb, { raw: { width: SIZE, height: SIZE, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

async function median(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

function runPillow(path: string): number | string {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'pillow_resize.py');
  // pyenv shims may hide Debian's python3-pil; try the system interpreter too.
  for (const python of ['python3', '/usr/bin/python3']) {
    try {
      execFileSync(python, ['-c', 'import PIL'], { stdio: 'ignore' });
    } catch {
      continue;
    }
    const out = execFileSync(python, [script, path, String(TARGET), String(TARGET), String(ITERATIONS)]);
    return Number(out.toString().trim());
  }
  return 'Pillow not found (install it with `apt-get install -y python3-pil`); skipping the Pillow baseline';
}

async function main(): Promise<void> {
  const jpeg = await photoLikeJpeg();
  const dir = await mkdtemp(join(tmpdir(), 'io-image-bench-'));
  const path = join(dir, 'photo.jpg');
  await writeFile(path, jpeg);

  const input = new Image();
  const output = new Image({ mime_type: 'image/jpeg' });
  const viaDescriptor = async () => {
    const request = new BufferedHttpRequest({ headers: { 'content-type': 'image/jpeg' }, body: jpeg });
    const img = await input.fromHttpRequest(request);
    const resized = img.toSharp().resize(TARGET, TARGET, { kernel: 'lanczos3' });
    return readResponseBody(await output.toHttpResponse(resized, null));
  };
  const viaSharp = () =>
    sharp(jpeg).resize(TARGET, TARGET, { kernel: 'lanczos3' }).jpeg({ quality: 80 }).toBuffer();

  const threads = sharp.concurrency();
  const descriptorMs = await median(viaDescriptor);
  const sharpMs = await median(viaSharp);
  sharp.concurrency(1);
  const sharp1Ms = await median(viaSharp);
  sharp.concurrency(threads);
  const pillow = runPillow(path);
  await rm(dir, { recursive: true, force: true });

  console.log(
    `io-image bench: decode + resize ${SIZE}x${SIZE} -> ${TARGET}x${TARGET} (lanczos) + JPEG q80, median of ${ITERATIONS}`,
  );
  console.log(`  Image descriptor (sniff, decode to pixels, resize, encode): ${descriptorMs.toFixed(2)} ms`);
  console.log(`  sharp pipeline (libvips, ${threads} thread(s)):              ${sharpMs.toFixed(2)} ms`);
  console.log(`  sharp pipeline (1 thread):                                 ${sharp1Ms.toFixed(2)} ms`);
  if (typeof pillow === 'number') {
    console.log(`  Pillow (1 thread):                                         ${pillow.toFixed(2)} ms`);
    console.log(`  ratio Pillow / Image descriptor: ${(pillow / descriptorMs).toFixed(2)}x (target >= 2x)`);
    console.log(`  ratio Pillow / sharp pipeline:   ${(pillow / sharpMs).toFixed(2)}x`);
    console.log(`  ratio Pillow / sharp 1 thread:   ${(pillow / sharp1Ms).toFixed(2)}x`);
  } else {
    console.log(`  ${pillow}`);
  }
}

await main();
