/**
 * The VAE decoder at 512² (64×64 latents) with and without ORT's CPU memory arena, runs alternated: time
 * (min/median/max) and the load average. The engine opens its VAE sessions without the arena so their buffers do not
 * stay allocated beside the UNet's (engines/onnx/load.ts); this measures what that costs per image.
 *
 * Usage (from packages/diffusion), with a graph cache that holds the model's vae_decoder graph (e.g. from
 * bench/onnx-weights-image.ts --cache=<dir>):
 *   nice -n 10 tsx --conditions=source bench/onnx-vae-arena.ts <cache dir> [--threads=2] [--runs=3]
 */
import { readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { loadOrt } from '@tiffin/onnx';
import { sessionOptions } from '../src/engines/onnx/session.js';
import { VAE_DECODER_IO } from '../src/engines/onnx/vae-graph.js';
import { detInput } from '../src/weights/deterministic.js';

const args = process.argv.slice(2);
const cache = args.find((a) => !a.startsWith('--'));
const opt = (name: string, def: number) =>
  Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def);
const threads = opt('threads', 2);
const runs = opt('runs', 3);
const graph = cache && readdirSync(cache).find((d) => d.startsWith('vae_decoder-') && !d.includes('.tmp'));
if (!cache || !graph) {
  console.error('usage: onnx-vae-arena <graph cache dir with a vae_decoder graph> [--threads=2] [--runs=3]');
  process.exit(2);
}
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const ort = await loadOrt();
const sessions = await Promise.all(
  [true, false].map((arena) =>
    ort.InferenceSession.create(join(cache, graph, 'model.onnx'), {
      ...sessionOptions({ providers: ['cpu'], threads, skipped: [] }),
      enableCpuMemArena: arena,
    }),
  ),
);
const z = new ort.Tensor('float32', detInput('bench/vae-latents', [1, 64, 64, 4]), [1, 64, 64, 4]);
const times: number[][] = [[], []];
for (const s of sessions) await s.run({ [VAE_DECODER_IO.input]: z }); // warm-up
for (let i = 0; i < runs; i++)
  for (let k = 0; k < 2; k++) {
    const t0 = performance.now();
    await sessions[k].run({ [VAE_DECODER_IO.input]: z });
    times[k].push((performance.now() - t0) / 1000);
  }
const fmt = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const median = s[Math.floor(s.length / 2)];
  return {
    text: `min ${s[0].toFixed(2)} s, median ${median.toFixed(2)} s, max ${s[s.length - 1].toFixed(2)} s`,
    median,
  };
};
const [on, off] = times.map(fmt);
console.log(`VAE decode 512², ${threads} threads, ${runs} alternated runs (load ${load()})`);
console.log(`  arena on:  ${on.text}`);
console.log(`  arena off: ${off.text}  (off / on medians ${(off.median / on.median).toFixed(2)}×)`);
for (const s of sessions) await s.release();
