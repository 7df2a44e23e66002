import { describe, expect, it } from 'vitest';
import type { SchedulerName } from '../src/schedulers/registry.js';
import { detInput } from '../src/weights/deterministic.js';
import { type Full, fixture, maxAbsDiff } from './helpers/fixtures.js';
import { fixtureNoise, referenceCaseRequest, tinyOnBothEngines } from './helpers/tiny.js';

/**
 * Few-step generation on the tiny SD 1.x folder against diffusers 0.27.2 (`fewstep.json` → `pipelines`, written by
 * reference/fewstep_reference.py): LCM at 1 and 4 steps without guidance, trailing Euler (1 and 4 steps) and Euler
 * ancestral with guidance 0 as SD-Turbo runs, DPM++ 2M Karras with guidance. Given prompt embeddings, latents and
 * scheduler draws; the 8-bit images must be within one level of diffusers' on both engines.
 */

interface PipelineCase {
  scheduler: SchedulerName;
  config_overrides: Record<string, unknown>;
  steps: number;
  guidance_scale: number;
  timesteps: number[];
  image_full: Full;
  image_uint8: number[];
}

const cases = fixture('fewstep.json').pipelines as Record<string, PipelineCase>;
const levels: string[] = [];

describe('few-step schedulers in the tiny sd1 pipeline match diffusers (8-bit levels)', () => {
  const tiny = tinyOnBothEngines('sd1');
  for (const engine of ['onnxruntime', 'wasm'] as const) {
    for (const [key, c] of Object.entries(cases)) {
      it(`${key} on ${engine}`, async () => {
        const out = await tiny.pipes[engine].text2img({
          ...referenceCaseRequest(c),
          return_float: true,
        });
        expect(out.timesteps).toEqual(c.timesteps);
        const floatErr = maxAbsDiff(out.images[0].float as Float32Array, c.image_full.data);
        const level = maxAbsDiff(out.images[0].data, c.image_uint8);
        levels.push(
          `${key} ${engine}: max 8-bit level diff ${level}, float err ${floatErr.toExponential(2)}`,
        );
        console.info(levels[levels.length - 1]);
        expect(level).toBeLessThanOrEqual(1);
      });
    }
  }

  it("takes the request's timestep_spacing and use_karras_sigmas as those config keys, and refuses them where unused", async () => {
    const pipe = tiny.pipes.onnxruntime;
    const base = {
      prompt_embeds: {
        shape: [1, 77, 32] as [number, number, number],
        data: detInput('pipe/prompt_embeds', [1, 77, 32]),
      },
      height: 32,
      width: 32,
      latents: detInput('pipe/latents', [1, 4, 16, 16]),
    };
    const trailing = cases.euler_trailing_4;
    const out = await pipe.text2img({
      ...base,
      num_inference_steps: 4,
      guidance_scale: 0,
      scheduler: 'euler',
      timestep_spacing: 'trailing',
      noise: fixtureNoise(),
    });
    expect(maxAbsDiff(out.images[0].data, trailing.image_uint8)).toBeLessThanOrEqual(1);
    const karras = await pipe.text2img({
      ...base,
      num_inference_steps: 4,
      guidance_scale: 0,
      scheduler: 'dpmpp_2m',
      use_karras_sigmas: true,
    });
    expect(karras.timesteps).toEqual(cases.dpmpp_2m_karras_4.timesteps);
    await expect(pipe.text2img({ ...base, scheduler: 'ddim', use_karras_sigmas: true })).rejects.toThrow(
      /use_karras_sigmas/,
    );
    await expect(pipe.text2img({ ...base, scheduler: 'lcm', timestep_spacing: 'trailing' })).rejects.toThrow(
      /timestep_spacing/,
    );
  });
});
