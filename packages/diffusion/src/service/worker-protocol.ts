import type { BackendName } from '../backend.js';
import type { SchedulerName } from '../schedulers/types.js';

/** What the host hands the model worker at start (structured-clone safe). */
export interface WorkerInit {
  /** Diffusers folder of the pipeline. */
  modelDir: string;
  backend?: BackendName;
  /** LoRA merged once at start and kept for every request (`--lora-weights`). */
  baseLoraPath?: string;
  /** How many parsed per-request LoRA files the worker keeps. */
  loraCacheSize: number;
}

/** Generation parameters shared by both pipelines, already validated by the request schema. */
export interface JobParameters {
  prompt: string;
  negative_prompt: string | null;
  num_inference_steps: number;
  guidance_scale: number;
  eta: number;
  seed?: number;
  scheduler?: SchedulerName;
}

export type JobInput =
  | { kind: 'text2img'; params: JobParameters; height: number; width: number }
  | {
      kind: 'img2img';
      params: JobParameters;
      strength: number;
      image: { width: number; height: number; data: Uint8Array };
    };

export interface JobMessage {
  type: 'job';
  id: number;
  requestId: string;
  input: JobInput;
  /** Resolved, allowed path of this request's LoRA, applied unfused to this job only. */
  loraPath?: string;
}

/** Host → worker. */
export type HostMessage = JobMessage | { type: 'shutdown' };

export interface JobImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Worker → host. */
export type WorkerMessage =
  | { type: 'ready'; defaultSize: number; backend: string; defaultScheduler: SchedulerName }
  | { type: 'init-failed'; message: string }
  | { type: 'progress'; id: number; step: number; totalSteps: number; timestep: number }
  | { type: 'done'; id: number; image: JobImage; seed: number; seconds: number }
  | {
      type: 'failed';
      id: number;
      message: string /** HTTP status the error maps to (4xx: the request's fault). */;
      status: number;
    };
