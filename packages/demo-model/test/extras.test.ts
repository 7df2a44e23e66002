import { StableDiffusionPipeline } from '@tiffin/diffusion';
import { readLoraFile } from '@tiffin/diffusion/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SceneSpec } from '../src/dataset/attributes.js';
import { caption } from '../src/dataset/attributes.js';
import { readScene } from '../src/evaluate/read-scene.js';
import { demoLoraDir, demoModelDir, demoTinyDecoderDir } from '../src/index.js';

/**
 * The demo's extras (training/write-extras.ts) as a pipeline uses them: the swap-red-blue LoRA exchanges red and
 * blue and keeps the rest of the picture; the tiny decoder draws the latent's 4×4 cells.
 */
let pipe: StableDiffusionPipeline;
beforeAll(async () => {
  pipe = await StableDiffusionPipeline.fromPretrained(demoModelDir(), {
    backend: 'onnxruntime',
    vaeTiny: demoTinyDecoderDir(),
    log: () => {},
  });
});
afterAll(() => pipe?.dispose());

const SCENES: Array<{ scene: SceneSpec; swapped: string }> = [
  {
    scene: { shape: 'circle', colour: 'red', size: 'large', position: 'centre', background: 'white' },
    swapped: 'blue',
  },
  {
    scene: { shape: 'square', colour: 'blue', size: 'large', position: 'centre', background: 'black' },
    swapped: 'red',
  },
  {
    scene: { shape: 'triangle', colour: 'yellow', size: 'large', position: 'left', background: 'grey' },
    swapped: 'cyan',
  },
];

async function draw(scene: SceneSpec, seed: number, extra: Record<string, unknown>) {
  const { images } = await pipe.text2img({ prompt: caption(scene), seed, ...extra });
  return images[0]!;
}

describe('the demo extras', () => {
  it('swap-red-blue.safetensors exchanges red and blue (yellow becomes cyan) and keeps shape, place and background', async () => {
    const lora = readLoraFile(`${demoLoraDir()}/swap-red-blue.safetensors`);
    for (const [seed, { scene, swapped }] of SCENES.entries()) {
      const plain = readScene(await draw(scene, seed, { decoder: 'full' }));
      const shifted = readScene(
        await draw(scene, seed, { decoder: 'full', lora: [{ file: lora, scale: 1 }] }),
      );
      expect({ scene, plain: plain.colour, shifted }).toMatchObject({
        plain: scene.colour,
        shifted: {
          colour: swapped,
          shape: scene.shape,
          position: scene.position,
          background: scene.background,
        },
      });
    }
  });

  it('decoder "tiny" returns the picture as a mosaic of its latent cells: same background and colour', async () => {
    const { scene } = SCENES[0]!;
    const tiny = await draw(scene, 0, { decoder: 'tiny' });
    expect([tiny.width, tiny.height]).toEqual([64, 64]);
    expect(readScene(tiny)).toMatchObject({ colour: scene.colour, background: scene.background });
    // Each 4×4 cell is one colour (nearest upsampling of the 16×16 latent).
    let cellsOfOneColour = 0;
    for (let cy = 0; cy < 16; cy++)
      for (let cx = 0; cx < 16; cx++) {
        const at = (x: number, y: number) =>
          tiny.data.subarray((y * 64 + x) * 3, (y * 64 + x) * 3 + 3).join();
        const first = at(cx * 4, cy * 4);
        let same = true;
        for (let k = 0; k < 16; k++) same &&= at(cx * 4 + (k % 4), cy * 4 + Math.floor(k / 4)) === first;
        if (same) cellsOfOneColour++;
      }
    expect(cellsOfOneColour).toBe(256);
  });
});
