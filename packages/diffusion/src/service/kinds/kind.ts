import type { IODescriptor } from '@tiffin/core';
import type { ModelDefaults } from '../../pipeline/model-defaults.js';
import type { GenerationParameters, PipelineFamily } from '../../pipeline/parameters.js';
import type { StableDiffusionPipeline } from '../../pipeline/pipeline.js';
import type { CommonRequest, GenerationResult } from '../../pipeline/types.js';
import type { PendingControlNets } from '../controlnet/controlnet-request.js';
import type { DEFAULT_GENERATION_LIMITS, LoraDefaultedField, RequestedOutput } from '../request-schemas.js';
import type { GenerationKindName, JobInput } from '../worker-protocol.js';

export type { GenerationKindName } from '../worker-protocol.js';

/** What a kind needs to know of the service to describe its API. */
export interface KindContext {
  limits: typeof DEFAULT_GENERATION_LIMITS;
  /** The model's own output side (unet sample_size × VAE factor). */
  defaultSize: number;
  family: PipelineFamily;
  /** The model's own defaults (its `tiffin_defaults.json`, then the LoRA merged at start). */
  defaults: ModelDefaults;
  /** The values a request's left-out LoRA-defaulted fields take unless its LoRAs say otherwise. */
  defaulted: Pick<GenerationParameters, LoraDefaultedField>;
  /** The ControlNets the service loaded, by name (none when absent). */
  controlnets?: readonly string[];
}

/** One generation as a request gives it: its input for the model worker and the LoRA names it asks for. */
export interface GenerationRequest {
  input: JobInput;
  loras: Array<{ path: string; weight: number }>;
  /** Fields the request left out, which its LoRAs' own defaults may set. */
  leftOut: LoraDefaultedField[];
  /** The answer's format and quality as the body asks. */
  output: RequestedOutput;
  /** The checkpoint the request chose by name (`model`); null or absent: the service's start model. */
  model?: string | null;
  /** Its ControlNet units, decoded and run through their modules when it is admitted. */
  controlnet?: PendingControlNets;
}

/**
 * A kind of generation (text to image, image to image, inpainting): its HTTP API (served synchronously and as a
 * task), how a request becomes a job for the model worker, and the pipeline call the worker makes. The service
 * and the worker know kinds only through this contract and `GENERATION_KINDS`.
 */
export interface GenerationKind {
  readonly name: GenerationKindName;
  /** "text to image": the service description's words. */
  readonly title: string;
  /** The API's description (`/docs.json`). */
  readonly doc: string;
  /** The request descriptor (JSON, or multipart with images). */
  input(context: KindContext): IODescriptor;
  /**
   * A validated request value as a job for the worker (400 for what the schema could not check); its uploads
   * resized off the event loop.
   */
  toRequest(value: unknown, context: KindContext, signal?: AbortSignal): Promise<GenerationRequest>;
  /** In the model worker: the pipeline call for a job of this kind. */
  run(pipe: StableDiffusionPipeline, input: JobInput, common: CommonRequest): Promise<GenerationResult>;
}
