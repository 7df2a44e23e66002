import { randomInt } from 'node:crypto';
import { UnprocessableEntity } from '@tiffin/core';
import type { Generator } from '../../generator.js';
import { a1111ControlNet } from './a1111-controlnet.js';
import { type A1111Hires, a1111Hires } from './a1111-hires.js';
import { promptLoras } from './prompt-loras.js';
import { resolveSampler, samplerNameOf } from './samplers.js';

/** An A1111 txt2img/img2img body as Tiffin runs it: the kind's body per iteration, and what `info` reports. */
export interface A1111Plan {
  /** The kind's body (Tiffin field names), without its seed. */
  body: Record<string, unknown>;
  /** The first image's seed (image k of iteration i: seed + i × batch_size + k, as A1111 counts). */
  seed: number;
  batchSize: number;
  iterations: number;
  /** The request's fields as A1111 echoes them in `parameters` (defaults filled in). */
  parameters: Record<string, unknown>;
  samplerName: string;
  /** The schedule type as A1111's infotext names it (`Karras`); null when the request named no sampler. */
  scheduleLabel: string | null;
  /** txt2img's hires fix (`enable_hr`), null without. */
  hires: A1111Hires | null;
}

const MAX_ITERATIONS = 16;

function num(body: Record<string, unknown>, field: string, fallback: number): number {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new UnprocessableEntity(`${field} must be a number`);
  return value;
}

function str(body: Record<string, unknown>, field: string, fallback: string): string {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') throw new UnprocessableEntity(`${field} must be a string`);
  return value;
}

/**
 * The common A1111 fields mapped onto the kinds' own: prompt (its `<lora:name:weight>` tags as `lora_weights`),
 * negative_prompt, steps, cfg_scale, width, height, seed (-1: random), sampler_name, batch_size, n_iter,
 * denoising_strength, txt2img's hires fix (`enable_hr`, `a1111Hires`) and the ControlNet extension's units
 * (`alwayson_scripts.controlnet`, `a1111ControlNet`). Other fields (restore_faces, scripts, …) are ignored.
 */
export function a1111Plan(body: Record<string, unknown>, generator: Generator, img2img: boolean): A1111Plan {
  const { prompt, loras } = promptLoras(str(body, 'prompt', ''));
  const negative = str(body, 'negative_prompt', '');
  // A1111 1.9+ names the schedule apart (`scheduler`); older clients put it in the name (`DPM++ 2M Karras`).
  const sampler = resolveSampler(
    str(body, 'sampler_name', '') || str(body, 'sampler_index', ''),
    str(body, 'scheduler', ''),
  );
  const samplerName = sampler?.samplerName ?? samplerNameOf(generator.defaults.scheduler);
  const steps = num(body, 'steps', generator.defaults.num_inference_steps);
  const cfg = num(body, 'cfg_scale', generator.defaults.guidance_scale);
  const batchSize = num(body, 'batch_size', 1);
  const iterations = num(body, 'n_iter', 1);
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > MAX_ITERATIONS)
    throw new UnprocessableEntity(`n_iter must be an integer from 1 to ${MAX_ITERATIONS}`);
  const requestedSeed = num(body, 'seed', -1);
  if (!Number.isInteger(requestedSeed) || requestedSeed < -1 || requestedSeed > 0xffffffff)
    throw new UnprocessableEntity('seed must be -1 (random) or an integer from 0 to 4294967295');
  // A random seed is drawn here so `info` can report it (and reproduce the image).
  const seed = requestedSeed === -1 ? randomInt(0, 2 ** 31) : requestedSeed;
  const width = num(body, 'width', generator.defaultSize);
  const height = num(body, 'height', generator.defaultSize);
  const hires = img2img ? null : a1111Hires(body, width, height, generator.maxSize);
  const initImage = img2img && Array.isArray(body.init_images) ? body.init_images[0] : undefined;
  const controlnet = a1111ControlNet(body, generator.context.controlnets ?? [], initImage);
  const kindBody: Record<string, unknown> = {
    prompt,
    negative_prompt: negative || null,
    num_inference_steps: steps,
    guidance_scale: cfg,
    num_images_per_prompt: batchSize,
    lora_weights: loras.length > 0 ? loras : null,
    output_format: 'png',
    ...(sampler ? { scheduler: sampler.scheduler } : {}),
    ...(sampler && sampler.karras !== null ? { use_karras_sigmas: sampler.karras } : {}),
    ...(img2img ? { strength: num(body, 'denoising_strength', 0.75) } : { width, height }),
    ...(hires ? { hires: hires.body } : {}),
    ...(controlnet ? { controlnet } : {}),
  };
  const parameters = {
    ...body,
    prompt: str(body, 'prompt', ''),
    negative_prompt: negative,
    steps,
    cfg_scale: cfg,
    width,
    height,
    seed: requestedSeed,
    batch_size: batchSize,
    n_iter: iterations,
    sampler_name: samplerName,
    ...(sampler ? { scheduler: sampler.scheduleLabel } : {}),
    ...(hires ? { denoising_strength: hires.strength } : {}),
    // Images are not echoed back: they are in the request already, and large.
    ...(img2img ? { init_images: null, mask: null } : {}),
    ...(controlnet ? { alwayson_scripts: {} } : {}),
  };
  return {
    body: kindBody,
    seed,
    batchSize,
    iterations,
    parameters,
    samplerName,
    scheduleLabel: sampler?.scheduleLabel ?? null,
    hires,
  };
}
