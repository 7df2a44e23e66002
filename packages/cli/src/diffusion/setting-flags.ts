import { CLIException } from '@tiffin/core/internal';
import {
  type BackendName,
  type DiffusionPipelineKind,
  type OnnxWeights,
  parseOnnxWeights,
} from '@tiffin/diffusion';
import { parseOrtProviders, parseOrtThreads } from '@tiffin/onnx';
import { type Command, InvalidArgumentError } from 'commander';
import { parseNonNegativeInt, parsePositiveInt, parseSeconds } from '../options.js';

/** What the service does at run time: request bounds, queue, jobs, engine threads (`start` runs with them, `build` records them). */
export interface ServiceSettingFlags {
  maxQueue: number;
  concurrency?: number;
  queue?: number;
  /** Seconds a seeded request's answer is kept (the response cache); absent: no cache. */
  cacheTtl?: number;
  /** Absent: twice the model's own size. */
  maxSize?: number;
  maxSteps: number;
  maxImages: number;
  maxPromptLength: number;
  maxJobs: number;
  jobTtl: number;
  timeout: number;
  progressAll?: boolean;
  /** False with --no-openai-api. */
  openaiApi?: boolean;
  /** False with --no-a1111-api. */
  a1111Api?: boolean;
  /** false with --no-ui */
  ui?: boolean;
  ortThreads?: number;
  ortProviders?: string[];
  weights?: OnnxWeights;
}

/** `--pipeline text2img,img2img,inpaint` (any of them, comma-separated; `text2image` is `text2img`). */
export function parsePipelineKinds(value: string): DiffusionPipelineKind[] {
  const kinds = value
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  if (kinds.length === 0) throw new InvalidArgumentError('expected text2img, img2img and/or inpaint');
  return kinds.map((k) => {
    if (k === 'text2image' || k === 'text2img') return 'text2img';
    if (k === 'img2img' || k === 'inpaint') return k;
    throw new InvalidArgumentError(`${JSON.stringify(k)} is not text2img, img2img or inpaint`);
  });
}

/** commander's error for a bad value, from the diffusion package's own check (one validation step). */
function flagParser<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

function parseMultipleOf8(value: string): number {
  const n = parsePositiveInt(value);
  if (n % 8 !== 0) throw new InvalidArgumentError('expected a multiple of 8');
  return n;
}

export const ENGINE_HELP =
  'onnxruntime (threads/providers: --ort-threads, --ort-providers) or a tfjs backend (webgpu only when named, and needs webgpu@0.6.2 and @tensorflow/tfjs-backend-webgpu@4.22.0 installed)';

/** The run-time settings of the service: the same options on `start` and `build`. */
export const serviceSettingOptions = (command: Command): Command =>
  command
    .option('--max-queue <n>', 'requests waiting behind the running one before 503', parsePositiveInt, 4)
    .option(
      '--concurrency <n>',
      "requests of each generation API that run at once, with a queue of the API's own (ordered by Priority: u=)",
      parsePositiveInt,
    )
    .option(
      '--queue <n>',
      'requests of each generation API that wait for one of --concurrency before 503 (default 0)',
      parseNonNegativeInt,
    )
    .option(
      '--cache-ttl <seconds>',
      'keep the answers of seeded generation requests this long and send them again for the same request (Tiffin-Cache: hit; where: --cache); default off',
      parseNonNegativeInt,
    )
    .option(
      '--max-size <px>',
      "largest height/width accepted (multiple of 8; default twice the model's size)",
      parseMultipleOf8,
    )
    .option('--max-steps <n>', 'most num_inference_steps accepted', parsePositiveInt, 150)
    .option('--max-images <n>', 'most images per request (num_images_per_prompt)', parsePositiveInt, 4)
    .option(
      '--max-prompt-length <chars>',
      'longest prompt, negative_prompt, prompt_2 or negative_prompt_2 accepted, in characters',
      parsePositiveInt,
      10_000,
    )
    .option(
      '--max-jobs <n>',
      'jobs (/text2img/submit) held at once, finished ones included',
      parsePositiveInt,
      64,
    )
    .option('--job-ttl <seconds>', 'how long a finished job and its images are kept', parsePositiveInt, 600)
    .option(
      '--progress-all',
      'let POST /progress without a request_id stream every generation (ids and previews) to any client',
    )
    .option('--no-ui', 'do not serve the generation page at /ui')
    .option('--no-openai-api', 'do not serve the OpenAI Images API (/v1/images/*, /v1/models)')
    .option('--no-a1111-api', "do not serve AUTOMATIC1111's API (/sdapi/v1/*)")
    .option(
      '--timeout <seconds>',
      'per-request timeout (504; the generation is cancelled)',
      parseSeconds,
      600,
    )
    .option(
      '--ort-threads <n>',
      'onnxruntime intra-op threads (default $TIFFIN_ORT_THREADS, else every core)',
      flagParser(parseOrtThreads),
    )
    .option(
      '--ort-providers <list>',
      'onnxruntime execution providers in preference order, e.g. cuda,cpu (default $TIFFIN_ORT_PROVIDERS, else cpu; cpu is always the fallback, a provider that is not installed is skipped with a log line)',
      flagParser(parseOrtProviders),
    )
    .option(
      '--weights <format>',
      'how onnxruntime stores the weights of the graphs it builds: f32 (default), f16 (half the disk, same speed) or int8 (UNet and text encoder linear/conv weights quantized per channel: faster CPU steps, a quarter of their memory, slightly different images); GPU providers keep f16/f32',
      flagParser((v) => parseOnnxWeights(v)),
    );

/** The `createDiffusionService` options the setting flags give (one check for both commands). */
export function serviceSettings(
  flags: ServiceSettingFlags,
  backend: BackendName | undefined,
  backendFlag: string,
) {
  const onnxFlag =
    flags.ortThreads !== undefined
      ? '--ort-threads'
      : flags.ortProviders
        ? '--ort-providers'
        : flags.weights
          ? '--weights'
          : null;
  if (onnxFlag && backend && backend !== 'onnxruntime')
    throw new CLIException(`${onnxFlag} applies to ${backendFlag} onnxruntime, not ${backend}`);
  return {
    limits: {
      maxSize: flags.maxSize,
      maxSteps: flags.maxSteps,
      maxImages: flags.maxImages,
      maxPromptLength: flags.maxPromptLength,
    },
    maxQueue: flags.maxQueue,
    ...(flags.concurrency === undefined ? {} : { concurrency: flags.concurrency, queue: flags.queue ?? 0 }),
    ...(flags.cacheTtl === undefined ? {} : { cache: { ttl: flags.cacheTtl } }),
    maxJobs: flags.maxJobs,
    jobResultTtl: flags.jobTtl,
    timeout: flags.timeout,
    progressAll: flags.progressAll === true,
    page: flags.ui !== false,
    openaiApi: flags.openaiApi !== false,
    a1111Api: flags.a1111Api !== false,
    backend,
    onnx: {
      intraOpThreads: flags.ortThreads,
      executionProviders: flags.ortProviders,
      weights: flags.weights,
    },
  };
}
