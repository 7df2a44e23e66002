import * as tf from '@tensorflow/tfjs';
import { type BackendName, StableDiffusionPipeline } from '@tiffin/diffusion';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_SIZE, type SceneSpec } from '../src/dataset/attributes.js';
import { type RenderedScene, renderScene } from '../src/dataset/render.js';
import { readScene } from '../src/evaluate/read-scene.js';
import { demoModelDir } from '../src/index.js';

/** The VAE's cell: each latent pixel covers CELL×CELL picture pixels. */
const CELL = 4;
const SIDE = IMAGE_SIZE / CELL;

/**
 * The fixed latent the model was trained on (training/train.py `fixed_latents`): per 4×4 cell the mean RGB and
 * the shape's mean coverage, in [-1, 1], NHWC.
 */
function fixedLatent(picture: RenderedScene): Float32Array {
  const out = new Float32Array(SIDE * SIDE * 4);
  for (let cy = 0; cy < SIDE; cy++)
    for (let cx = 0; cx < SIDE; cx++) {
      const sum = [0, 0, 0, 0];
      for (let y = cy * CELL; y < (cy + 1) * CELL; y++)
        for (let x = cx * CELL; x < (cx + 1) * CELL; x++) {
          const p = y * IMAGE_SIZE + x;
          for (let c = 0; c < 3; c++) sum[c] += picture.data[p * 3 + c];
          sum[3] += picture.coverage[p];
        }
      for (let c = 0; c < 4; c++) out[(cy * SIDE + cx) * 4 + c] = sum[c] / (CELL * CELL) / 127.5 - 1;
    }
  return out;
}

/**
 * Pictures whose colour an earlier decoder (one channel a normalisation group at 64×64) got wrong: large shapes
 * pulled towards their background (red on white read as orange, cyan on black as blue), and every shape colour.
 */
const SCENES: SceneSpec[] = [
  { shape: 'square', colour: 'red', size: 'large', position: 'centre', background: 'white' },
  { shape: 'circle', colour: 'cyan', size: 'large', position: 'left', background: 'black' },
  { shape: 'cross', colour: 'yellow', size: 'medium', position: 'top right', background: 'grey' },
  { shape: 'square', colour: 'green', size: 'large', position: 'bottom', background: 'white' },
  { shape: 'circle', colour: 'purple', size: 'medium', position: 'bottom left', background: 'grey' },
  { shape: 'triangle', colour: 'orange', size: 'large', position: 'top', background: 'black' },
  { shape: 'square', colour: 'blue', size: 'small', position: 'right', background: 'white' },
  { shape: 'circle', colour: 'pink', size: 'large', position: 'centre', background: 'grey' },
];

describe.each<BackendName>(['onnxruntime', 'cpu'])('the shipped VAE decoder on %s', (backend) => {
  let pipe: StableDiffusionPipeline;
  beforeAll(async () => {
    pipe = await StableDiffusionPipeline.fromPretrained(demoModelDir(), { backend, log: () => {} });
  });
  afterAll(() => pipe?.dispose());

  it('draws the colour, background and place of a training latent (no UNet involved)', async () => {
    for (const scene of SCENES) {
      const latent = tf.tensor4d(fixedLatent(renderScene(scene)), [1, SIDE, SIDE, 4]);
      const decoded = await pipe.vae.decode(latent);
      const pixels = Uint8Array.from(await decoded.data(), (v) =>
        Math.round((Math.min(1, Math.max(-1, v)) + 1) * 127.5),
      );
      latent.dispose();
      decoded.dispose();
      const reading = readScene({ width: IMAGE_SIZE, height: IMAGE_SIZE, data: pixels });
      expect({
        scene,
        colour: reading.colour,
        background: reading.background,
        position: reading.position,
      }).toEqual({ scene, colour: scene.colour, background: scene.background, position: scene.position });
    }
  });
});
