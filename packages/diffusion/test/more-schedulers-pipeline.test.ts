import { describe, expect, it } from 'vitest';
import type { SchedulerName } from '../src/schedulers/registry.js';
import { detInput } from '../src/weights/deterministic.js';
import { fixture, maxAbsDiff } from './helpers/fixtures.js';
import { referenceCaseRequest, tinyOnBothEngines } from './helpers/tiny.js';

/**
 * The schedulers behind A1111's sampler names in the tiny SD 1.x pipeline against diffusers 0.27.2
 * (`more_schedulers.json` → `pipelines`, written by reference/more_schedulers_reference.py): UniPC, Heun Karras and
 * DPM++ 2M SDE Karras with guidance, DPM++ SDE Karras without. Given prompt embeddings, latents and draws (the SDE
 * noise included); the 8-bit images must be within one level of diffusers' on both engines, and progress counts the
 * steps asked for, not the model calls.
 */

interface PipelineCase {
  scheduler: SchedulerName;
  config_overrides: Record<string, unknown>;
  steps: number;
  guidance_scale: number;
  timesteps: number[];
  image_uint8: number[];
}

const cases = fixture('more_schedulers.json').pipelines as Record<string, PipelineCase>;

describe('A1111 samplers’ schedulers in the tiny sd1 pipeline match diffusers (8-bit levels)', () => {
  const tiny = tinyOnBothEngines('sd1');
  for (const engine of ['onnxruntime', 'wasm'] as const) {
    for (const [key, c] of Object.entries(cases)) {
      it(`${key} on ${engine}`, async () => {
        const progress: number[] = [];
        const out = await tiny.pipes[engine].text2img({
          ...referenceCaseRequest(c),
          onProgress: ({ step, totalSteps }) => {
            progress.push(step);
            expect(totalSteps).toBe(c.steps);
          },
        });
        expect(maxAbsDiff(out.timesteps, c.timesteps)).toBeLessThan(1e-3);
        expect(progress).toEqual(Array.from({ length: c.steps }, (_, i) => i + 1));
        const level = maxAbsDiff(out.images[0].data, c.image_uint8);
        console.info(`${key} ${engine}: max 8-bit level diff ${level}`);
        expect(level).toBeLessThanOrEqual(1);
      });
    }
  }

  it('DPM++ SDE with a seed draws from that image’s Brownian tree: the same image again, another seed another', async () => {
    const run = (seed: number) =>
      tiny.pipes.onnxruntime.text2img({
        prompt_embeds: { shape: [1, 77, 32], data: detInput('pipe/prompt_embeds', [1, 77, 32]) },
        height: 32,
        width: 32,
        num_inference_steps: 2,
        guidance_scale: 0,
        scheduler: 'dpmpp_sde',
        use_karras_sigmas: true,
        // Given latents: the seed changes only the SDE noise.
        latents: detInput('pipe/latents', [1, 4, 16, 16]),
        seed,
      });
    const [a, again, other] = [await run(7), await run(7), await run(8)];
    expect(again.images[0].data).toEqual(a.images[0].data);
    expect(maxAbsDiff(other.images[0].data, a.images[0].data)).toBeGreaterThan(0);
  });
});
