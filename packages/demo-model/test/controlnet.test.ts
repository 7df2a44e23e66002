import { StableDiffusionPipeline } from '@tiffin/diffusion';
import { cannyEdges } from '@tiffin/diffusion/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caption } from '../src/dataset/attributes.js';
import { renderScene } from '../src/dataset/render.js';
import { controlNetPairs } from '../src/evaluate/controlnet-pairs.js';
import { readScene } from '../src/evaluate/read-scene.js';
import { demoControlNetDir, demoModelDir } from '../src/index.js';

/**
 * The shipped Canny ControlNet guides: the prompt asks for one held-out scene, the map is the Canny edges (OpenCV's,
 * as `module: "canny"` computes them) of a scene with another shape and position, and the evaluator reads the map's
 * position and size in the prompt's colour and background; without the net the same seeds draw the prompt's
 * position. (Shape follows the map in a quarter of the pairs only: README "ControlNet".) Counts over the first 8
 * pairs of `bench/controlnet.ts` with its seeds, not every picture: the bench measures the rates.
 */
let pipe: StableDiffusionPipeline;
beforeAll(async () => {
  pipe = await StableDiffusionPipeline.fromPretrained(demoModelDir(), {
    backend: 'onnxruntime',
    controlnets: { canny: demoControlNetDir() },
    log: () => {},
  });
});
afterAll(() => pipe?.dispose());

const CASES = controlNetPairs().slice(0, 8);

async function draw(prompt: string, seed: number, map?: ReturnType<typeof cannyEdges>) {
  const { images } = await pipe.text2img({
    prompt,
    seed,
    ...(map ? { controlnet: [{ model: 'canny', image: map }] } : {}),
  });
  return readScene(images[0]!);
}

describe('the demo ControlNet', () => {
  it('moves the prompt’s shape to the edge map’s place and size, in the prompt’s colour and background', async () => {
    const guided = { position: 0, size: 0, colour: 0, background: 0 };
    const plain = { position: 0 };
    for (const [seed, pair] of CASES.entries()) {
      const prompt = caption(pair.prompt);
      const g = await draw(prompt, seed, cannyEdges(renderScene(pair.map)));
      if (g.position === pair.map.position) guided.position++;
      if (g.size === pair.map.size) guided.size++;
      if (g.colour === pair.prompt.colour) guided.colour++;
      if (g.background === pair.prompt.background) guided.background++;
      if ((await draw(prompt, seed)).position === pair.map.position) plain.position++;
    }
    // The map's place wins over the prompt's (every pair's map is elsewhere): with the net nearly always, without never.
    expect({ guided, plain }).toMatchObject({
      guided: { position: expect.toSatisfy((n: number) => n >= 7) },
      plain: { position: 0 },
    });
    expect(guided.colour).toBeGreaterThanOrEqual(6);
    expect(guided.background).toBe(CASES.length);
    expect(guided.size).toBeGreaterThanOrEqual(6);
  });
});
