/**
 * Seconds per UNet call (batch 2 = one classifier-free-guidance step) for the tiny pipeline and
 * for an SD1.5-sized UNet at 64×64 latents (512 px) with random weights made in memory, on each
 * tfjs backend that loads. Usage: pnpm bench [-- --backends wasm,cpu --sd15]
 */
import * as tf from '@tensorflow/tfjs';
import { type BackendName, selectBackend } from '../src/backend.js';
import { UNet2DConditionModel, type UNetConfig, unetWeightSpecs } from '../src/models/unet.js';
import { tinyConfigs } from '../src/tiny/tiny-configs.js';
import { detWeight } from '../src/weights/deterministic.js';
import { toTfLayout, type WeightSpec, WeightStore } from '../src/weights/store.js';

const SD15_UNET: UNetConfig = {
  ...(tinyConfigs('sd1').unet as unknown as UNetConfig),
  sample_size: 64,
  block_out_channels: [320, 640, 1280, 1280],
  down_block_types: ['CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'DownBlock2D'],
  up_block_types: ['UpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D'],
  cross_attention_dim: 768,
  attention_head_dim: 8,
};

function tinyStore(config: UNetConfig): WeightStore {
  const store = new WeightStore('unet', unetWeightSpecs(config));
  for (const s of store.specList()) store.setTorch(s.name, s.shape, detWeight(s.name, s.shape));
  return store;
}

/** Random weights created directly as tensors (no multi-GB JS arrays). */
function randomStore(config: UNetConfig): WeightStore {
  const store = new WeightStore('unet', unetWeightSpecs(config));
  for (const s of store.specList()) {
    const layoutShape = toTfLayout(s.kind, s.shape, new Float32Array(0)).shape;
    const fanIn = s.shape.slice(1).reduce((a, b) => a * b, 1);
    const shape = s.kind === 'plain' ? [...s.shape] : layoutShape;
    store.adopt(
      s.name,
      s.shape.length >= 2
        ? tf.randomUniform(shape, -1, 1).mul(Math.sqrt(3 / fanIn))
        : tf.fill(shape, s.name.endsWith('.bias') ? 0 : 1),
    );
  }
  return store;
}

const paramCount = (specs: readonly WeightSpec[]) =>
  specs.reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0);

async function timeCalls(
  unet: UNet2DConditionModel,
  latent: number,
  contextDim: number,
  calls: number,
): Promise<number[]> {
  const sample = tf.randomNormal([2, latent, latent, 4]) as tf.Tensor4D;
  const ctx = tf.randomNormal([2, 77, contextDim]) as tf.Tensor3D;
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    const out = unet.predict(sample, 981 - i, ctx);
    await out.data();
    out.dispose();
    times.push((performance.now() - t0) / 1000);
  }
  tf.dispose([sample, ctx]);
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const backendArg = args.find((a) => a.startsWith('--backends='))?.split('=')[1];
  const backends = (backendArg?.split(',') ?? [
    'tensorflow-gpu',
    'tensorflow',
    'wasm',
    'cpu',
  ]) as BackendName[];
  const sd15Backends = (args
    .find((a) => a.startsWith('--sd15='))
    ?.split('=')[1]
    ?.split(',') ?? ['tensorflow-gpu', 'tensorflow', 'wasm']) as BackendName[];
  console.log(`node ${process.version}; batch 2 (one CFG step), times in seconds`);
  for (const backend of backends) {
    try {
      await selectBackend(backend, () => {});
    } catch (e) {
      console.log(`${backend}: not available (${(e as Error).message.split(';')[0]})`);
      continue;
    }
    const tinyCfg = tinyConfigs('sd1').unet as unknown as UNetConfig;
    const tiny = new UNet2DConditionModel(tinyCfg, tinyStore(tinyCfg));
    await timeCalls(tiny, 16, 32, 1); // warm-up
    const tt = await timeCalls(tiny, 16, 32, 5);
    console.log(
      `${backend}: tiny UNet (16×16 latents, ${paramCount(tiny.weights.specList())} params): median ${median(tt).toFixed(4)} s/step`,
    );
    tiny.dispose();
    if (!sd15Backends.includes(backend)) {
      console.log(
        `${backend}: SD1.5 UNet skipped (too slow on this backend; pass --sd15=${backend} to run it)`,
      );
      continue;
    }
    if (backend === 'wasm') {
      // wasm32 cannot hold SD1.5's 3.2 GiB of f32 weights (the allocation aborts the wasm module),
      // so first measure the same geometry at half width (≈¼ params and FLOPs).
      const half = { ...SD15_UNET, block_out_channels: [160, 320, 640, 640] };
      const small = new UNet2DConditionModel(half, randomStore(half));
      const ts = await timeCalls(small, 64, 768, 1);
      console.log(
        `${backend}: half-width SD1.5 UNet (${(paramCount(small.weights.specList()) / 1e6).toFixed(1)} M params) 64×64 latents: ${ts[0].toFixed(2)} s/step`,
      );
      small.dispose();
    }
    let big: UNet2DConditionModel | null = null;
    try {
      const t0 = performance.now();
      big = new UNet2DConditionModel(SD15_UNET, randomStore(SD15_UNET));
      const params = paramCount(big.weights.specList());
      console.log(
        `${backend}: SD1.5 UNet random weights (${(params / 1e6).toFixed(1)} M params, ${((params * 4) / 2 ** 30).toFixed(2)} GiB f32) made in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
      for (const latent of [32, 64]) {
        const ts = await timeCalls(big, latent, 768, 1);
        console.log(
          `${backend}: SD1.5 UNet ${latent}×${latent} latents (${latent * 8} px): ${ts[0].toFixed(2)} s/step`,
        );
      }
    } catch (e) {
      console.log(`${backend}: SD1.5 UNet does not fit/run: ${(e as Error).message.split('\n')[0]}`);
    } finally {
      big?.dispose();
    }
  }
}

await main();
