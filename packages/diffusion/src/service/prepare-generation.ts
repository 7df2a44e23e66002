import { BadInput } from '@tiffin/core';
import { type ModelDefaults, mergeDefaults, readLoraDefaults } from '../pipeline/model-defaults.js';
import type { GenerationRequest } from './kinds/index.js';
import type { LoraRoots } from './lora-roots.js';
import type { JobInput, JobLora } from './worker-protocol.js';

/** A request's generation with its LoRAs resolved inside the allowed folders, ready for the worker. */
export interface PreparedGeneration {
  input: JobInput;
  loras: JobLora[];
}

/**
 * A request's generation with its LoRA names resolved inside the allowed folders (400 otherwise) and the fields it
 * left out set by its LoRAs' own defaults, where they have some (steps no more than `maxSteps`).
 */
export async function prepareGeneration(
  roots: LoraRoots,
  request: GenerationRequest,
  maxSteps: number,
  /** The request's: its ControlNet images still waiting for a thread when it aborts are dropped. */
  signal?: AbortSignal,
): Promise<PreparedGeneration> {
  const loras = await Promise.all(
    request.loras.map(async (l) => ({ path: await roots.resolve(l.path), name: l.path, weight: l.weight })),
  );
  const input = withLoraDefaults(request, loras, maxSteps);
  // ControlNet images are decoded (and their module run) only for a request that got this far.
  if (!request.controlnet) return { input, loras };
  return { input: { ...input, controlnet: await request.controlnet(signal) }, loras };
}

function withLoraDefaults(request: GenerationRequest, loras: JobLora[], maxSteps: number): JobInput {
  if (loras.length === 0 || request.leftOut.length === 0) return request.input;
  let loraDefaults: ModelDefaults;
  try {
    loraDefaults = mergeDefaults(...loras.map((l) => readLoraDefaults(l.path)));
  } catch {
    throw new BadInput('a LoRA in lora_weights has an invalid defaults file beside it');
  }
  const params = { ...request.input.params };
  for (const field of request.leftOut) {
    const value = loraDefaults[field];
    if (value === undefined) continue;
    if (field === 'num_inference_steps') params.num_inference_steps = Math.min(value as number, maxSteps);
    else if (field === 'guidance_scale') params.guidance_scale = value as number;
    else params.scheduler = value as ModelDefaults['scheduler'] & {};
  }
  return { ...request.input, params };
}
