/**
 * What bench/one-step-image.ts and bench/lcm-image.ts share: their options, the TAESD-shaped folder of random weights,
 * min/median/max, load average and peak RSS, the pipeline they open, the torch side (bench/torch_image.py, one
 * long-lived process answering one JSON line per image) and the timers that time each part inside the real pipeline's
 * image (the instance's own methods, wrapped: the same calls the image makes, timed where it makes them).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { tinyAutoencoderConfig, tinyDecoderWeightSpecs } from '../src/architectures/tiny-autoencoder.js';
import { parseOnnxWeights } from '../src/engines/onnx/weight-format.js';
import { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';
import { randomWeightsWriter } from '../src/tiny/sd15-random.js';

export function benchOptions(usage: string) {
  const args = process.argv.slice(2);
  const folder = args.find((a) => !a.startsWith('--'));
  const opt = (name: string, def: string) =>
    args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def;
  const size = Number(opt('size', '512'));
  if (!folder || size % 64 !== 0) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  return {
    args,
    opt,
    folder,
    size,
    threads: Number(opt('threads', '2')),
    runs: Number(opt('runs', '3')),
    weights: parseOnnxWeights(opt('weights', 'int8'), '--weights'),
    graphs: opt('graphs', join(tmpdir(), 'tiffin-bench-graphs')),
    torchSite: opt('torch-site', process.env.PYTHONPATH ?? ''),
    withTorch: !args.includes('--no-torch'),
  };
}
export type BenchOptions = ReturnType<typeof benchOptions>;

/** TAESD's own config (madebyollin/taesd), random weights: the decoder's cost does not depend on their values. */
export function taesdFolder(dir: string): string {
  if (existsSync(join(dir, 'diffusion_pytorch_model.safetensors'))) return dir;
  mkdirSync(dir, { recursive: true });
  const raw = { _class_name: 'AutoencoderTiny', scaling_factor: 1.0 };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(raw));
  randomWeightsWriter()(
    join(dir, 'diffusion_pytorch_model.safetensors'),
    tinyDecoderWeightSpecs(tinyAutoencoderConfig(raw, 'config.json')),
    'F32',
  );
  return dir;
}

export const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
};
export const fmt = (xs: number[]) => {
  const { min, median, max } = stats(xs);
  return `${median.toFixed(3)} s median (${min.toFixed(3)}–${max.toFixed(3)})`;
};
/** Per-round ratios a/b as "median× (min–max)". */
export const ratio = (a: number[], b: number[]) => {
  const { min, median, max } = stats(a.map((v, i) => v / b[i]));
  return `${median.toFixed(2)}× median (${min.toFixed(2)}–${max.toFixed(2)})`;
};
export const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
export const seconds = async <T>(f: () => Promise<T>): Promise<[number, T]> => {
  const t = performance.now();
  const v = await f();
  return [(performance.now() - t) / 1000, v];
};
export const peakRss = () => `${(process.resourceUsage().maxRSS / 1024 ** 2).toFixed(2)} GB`;

/** The bench's pipeline: onnxruntime, the options' threads and weights, the TAESD-shaped tiny decoder. */
export function openPipeline(o: BenchOptions, dir: string, vaeTiny: string) {
  return StableDiffusionPipeline.fromPretrained(dir, {
    backend: 'onnxruntime',
    onnx: { intraOpThreads: o.threads, weights: o.weights, cacheDir: o.graphs },
    vaeTiny,
    log: (m) => console.log(m),
  });
}

/**
 * Seconds spent in the pipeline's own text encoder, UNet and tiny decoder calls while it makes an image: each
 * instance method is wrapped (the same call, timed), and `take()` returns and clears what the last image spent.
 */
export function partTimers(pipe: StableDiffusionPipeline) {
  const spent = { text: 0, unet: 0, tiny: 0, unetCalls: 0 };
  const wrap = <O extends object, K extends keyof O>(obj: O, key: K, add: (s: number) => void) => {
    const f = obj[key] as unknown as (...a: unknown[]) => Promise<unknown>;
    (obj as Record<K, unknown>)[key] = async (...a: unknown[]) => {
      const t = performance.now();
      try {
        return await f.apply(obj, a);
      } finally {
        add((performance.now() - t) / 1000);
      }
    };
  };
  wrap(pipe.textEncoder, 'encodeOnHost', (s) => {
    spent.text += s;
  });
  wrap(pipe.unet, 'predictOnHost', (s) => {
    spent.unet += s;
    spent.unetCalls++;
  });
  if (pipe.tinyDecoder)
    wrap(pipe.tinyDecoder, 'decodeOnHost', (s) => {
      spent.tiny += s;
    });
  return {
    take: () => {
      const out = { ...spent };
      Object.assign(spent, { text: 0, unet: 0, tiny: 0, unetCalls: 0 });
      return out;
    },
  };
}

/**
 * diffusers on torch (bench/torch_image.py), loaded once: each `run()` is one image's parts in seconds. `mode` is
 * `one-step` (Euler trailing, 1 call) or `lcm` (LCMScheduler, 4 calls); `unet` is the folder's UNet.
 */
export async function startTorch(
  o: BenchOptions,
  mode: 'one-step' | 'lcm',
  vaeTiny: string,
  unetDir = o.folder,
) {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'torch_image.py');
  const child = spawn(
    'nice',
    ['-n', '10', '/usr/bin/python3', script, mode, unetDir, vaeTiny, String(o.threads), String(o.size)],
    {
      env: { ...process.env, PYTHONPATH: o.torchSite, HF_HUB_OFFLINE: '1' },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error('torch_image.py ended');
    return JSON.parse(value) as Record<string, number>;
  };
  console.log(`torch ready: ${JSON.stringify(await next())}`);
  return {
    run: async () => {
      child.stdin.write('run\n');
      return next();
    },
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.stdin.end();
      }),
  };
}
