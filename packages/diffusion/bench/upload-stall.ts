/**
 * The event loop's longest stall while a 4096² upload is decoded and fitted to 1024² (docs/diffusion-service.md,
 * uploads): *before*, decoded on the loop's side (sharp's pixels, external memory) and copied into the resizing
 * thread (`decodeUploadHere`, `rgbInput`); *now*, decoded in the upload threads and its pixels moved, not copied,
 * into the resize (`decodeUpload`, `rgbInput` with `transfer`). Alternated runs; min/median/max of the longest gap
 * between two turns of a 1 ms timer (and, as the control, while the loop idles as long), and the load average.
 *
 * Usage (from packages/diffusion): taskset -c 0,1 nice -n 10 tsx --conditions=source bench/upload-stall.ts
 *   [--runs=3] [--side=4096] [--to=1024]
 */
import { loadavg } from 'node:os';
import sharp from 'sharp';
import { decodeUpload, decodeUploadHere } from '../src/service/compat/decode-upload.js';
import { rgbInput } from '../src/service/kinds/images.js';
import { DEFAULT_GENERATION_LIMITS } from '../src/service/request-schemas.js';

const args = process.argv.slice(2);
const opt = (name: string, def: number) =>
  Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def);
const runs = opt('runs', 3);
const side = opt('side', 4096);
const limits = { ...DEFAULT_GENERATION_LIMITS, maxSize: opt('to', 1024) };

/** A `side`² PNG with detail everywhere (gradients and a checkerboard), as an upload's bytes. */
async function upload(): Promise<Uint8Array> {
  const data = new Uint8Array(side * side * 3);
  for (let y = 0; y < side; y++)
    for (let x = 0; x < side; x++) {
      const i = (y * side + x) * 3;
      data[i] = (x * 255) / side;
      data[i + 1] = (y * 255) / side;
      data[i + 2] = ((x >> 3) + (y >> 3)) % 2 ? 230 : 20;
    }
  const png = await sharp(Buffer.from(data.buffer), { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
  return new Uint8Array(png);
}

/** The longest gap (ms) between turns of a 1 ms timer while `work` runs. */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(longest, performance.now() - last);
}

const ways: Record<string, (bytes: Uint8Array) => Promise<unknown>> = {
  // The control: no work at all for about as long, so the machine's own scheduling delays show.
  idle: () => new Promise((resolve) => setTimeout(resolve, 1500)),
  before: async (bytes) => rgbInput('img', await decodeUploadHere(bytes, side * side), limits),
  now: async (bytes) => rgbInput('img', await decodeUpload(bytes, side * side), limits, { transfer: true }),
};

const bytes = await upload();
const load = [loadavg()[0]];
// Warm both ways once (threads started, sharp loaded in them).
for (const way of Object.values(ways)) await way(bytes.slice());
const stalls: Record<string, number[]> = { idle: [], before: [], now: [] };
for (let r = 0; r < runs; r++)
  for (const [name, way] of Object.entries(ways))
    stalls[name]?.push(await longestStall(() => way(bytes.slice())));
load.push(loadavg()[0]);

const fmt = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]?.toFixed(1)} / ${s[Math.floor(s.length / 2)]?.toFixed(1)} / ${s[s.length - 1]?.toFixed(1)} ms`;
};
console.log(
  `${side}² PNG (${(bytes.length / 1e6).toFixed(1)} MB) to ${limits.maxSize}², ${runs} alternated runs`,
);
for (const [name, xs] of Object.entries(stalls))
  console.log(`  ${name}: longest loop stall min/median/max ${fmt(xs)}`);
console.log(`  load average ${load.map((l) => l.toFixed(2)).join(' → ')}`);
