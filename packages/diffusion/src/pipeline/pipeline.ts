import { existsSync, statSync } from 'node:fs';
import { InvalidArgument, ServiceUnavailable } from '@tiffin/core';
import { type BackendChoice, type BackendName, selectBackend } from '../backend.js';
import { controlNetSingleFileToDiffusers } from '../checkpoints/controlnet-single-file.js';
import { type SingleFileOptions, singleFileToDiffusers } from '../checkpoints/single-file.js';
import type { ControlNetEngine } from '../engines/engine-models.js';
import { controlNetsFittingFolder } from '../engines/folder-configs.js';
import { loadOnnxComponents, type OnnxLoadOptions } from '../engines/onnx/load.js';
import { div } from '../latents/float32-math.js';
import {
  type HostTensor,
  hostTensor,
  NCHW_TO_NHWC,
  NHWC_TO_NCHW,
  transpose,
} from '../latents/host-tensor.js';
import { mergeLora } from '../lora/merge.js';
import { combineRuntimeLoras, prepareRuntimeLora, type RuntimeLora } from '../lora/runtime.js';
import type { AppliedLora, LoraTarget } from '../lora/types.js';
import { createScheduler, type SchedulerName, schedulerNameForClass } from '../schedulers/index.js';
import { KARRAS_SCHEDULER_NAMES } from '../schedulers/registry.js';
import type { SchedulerConfig } from '../schedulers/types.js';
import type { ClipTokenizer } from '../tokenizer/clip-tokenizer.js';
import type {
  EngineComponents,
  LoadComponentsOptions,
  SdxlComponents,
  TextEncoderModel,
  TinyDecoderModel,
  UNetModel,
  VaeModel,
} from './components.js';
import { encodeSdPrompt, sdConditioning, sdxlConditioning } from './conditioning.js';
import { controlNetResiduals } from './controlnet-residuals.js';
import { prepareControlNets } from './controlnet-units.js';
import { decodedPreview, isPreviewStep, type PreviewImage } from './decoded-preview.js';
import { denoise } from './denoise.js';
import { type DenoiseStart, GenerationRun } from './generation-run.js';
import { tensorToImages } from './image.js';
import { latentPreview } from './latent-preview.js';
import { type ModelDefaults, mergeDefaults, readModelDefaults } from './model-defaults.js';
import { imageSeed, NoiseDraws } from './noise-draws.js';
import {
  type GenerationParameters,
  img2imgParameters,
  inpaintParameters,
  NO_LIMITS,
  type PipelineFamily,
  type PipelineKind,
  text2imgParameters,
  validateParameters,
} from './parameters.js';
import { img2imgLatents } from './stable-diffusion/img2img.js';
import { INPAINT_UNET_CHANNELS, inpaintLatents } from './stable-diffusion/inpaint.js';
import { text2imgLatents } from './stable-diffusion/text2img.js';
import type {
  CommonRequest,
  GeneratedImage,
  GenerationResult,
  Img2ImgRequest,
  InpaintRequest,
  RequestLora,
  RgbImage,
  Text2ImgRequest,
} from './types.js';

export interface FromPretrainedOptions extends LoadComponentsOptions {
  /** Force a backend (else env TIFFIN_TF_BACKEND, else the first that loads). */
  backend?: BackendName;
  /** onnxruntime engine options (execution providers, threads, graph cache). */
  onnx?: Omit<OnnxLoadOptions, 'variant' | 'log'>;
  /** How a single-file checkpoint given instead of a folder is converted (tokenizer folders, `configDir`). */
  singleFile?: SingleFileOptions;
  /** Generation defaults laid over the folder's own `tiffin_defaults.json` (e.g. a LoRA merged at start). */
  defaults?: ModelDefaults;
  /**
   * Load only the `controlnets` that fit this model's UNet, leaving out the others with a log line (a request that
   * names one is then a 400); by default one that does not fit fails the load.
   */
  skipUnfitControlNets?: boolean;
  log?: (message: string) => void;
}

/**
 * Stable Diffusion 1.x / 2.x and SDXL text-to-image and image-to-image on onnxruntime or TensorFlow.js. An SDXL
 * folder differs only in the encode-prompt seam (two encoders, pooled embeds, micro-conditioning time ids) and its
 * parameter defaults (docs/spec/diffusion.md §10).
 */
export class StableDiffusionPipeline {
  readonly tokenizer: ClipTokenizer;
  readonly textEncoder: TextEncoderModel;
  /** SDXL's second encoder and tokenizer; absent for SD 1.x/2.x. */
  readonly sdxl: SdxlComponents | undefined;
  readonly unet: UNetModel;
  readonly vae: VaeModel;
  /** The tiny autoencoder's decoder (`vaeTiny`): the default decoder and the previews' when present. */
  readonly tinyDecoder: TinyDecoderModel | undefined;
  readonly schedulerConfig: SchedulerConfig;
  /** The folder's scheduler (`_class_name`), used when a request names none. */
  readonly defaultScheduler: SchedulerName;
  /** LoRA merge target (`unet.*`, `text_encoder.*` weights). */
  readonly loraTarget: LoraTarget;
  /** The model's own generation defaults (its `tiffin_defaults.json`), for fields a request leaves out. */
  readonly defaults: ModelDefaults;
  /** The ControlNets loaded with the pipeline (`controlnets`), by the name requests give. */
  private readonly controlnets: ReadonlyMap<string, ControlNetEngine>;
  /** Generations in flight, and whether one of them has a LoRA fused into the shared weights. */
  private inFlight = 0;
  private fusedInFlight = false;

  constructor(
    components: EngineComponents,
    readonly backend: BackendChoice | null = null,
    defaults: ModelDefaults = {},
  ) {
    this.defaults = defaults;
    this.tokenizer = components.tokenizer;
    this.textEncoder = components.textEncoder;
    this.unet = components.unet;
    this.vae = components.vae;
    this.tinyDecoder = components.tinyDecoder;
    this.sdxl = components.sdxl;
    this.schedulerConfig = components.schedulerConfig;
    const name = schedulerNameForClass(components.schedulerConfig._class_name, components.schedulerConfig);
    if (!name)
      throw new InvalidArgument(`scheduler class ${components.schedulerConfig._class_name} is not supported`);
    this.defaultScheduler = name;
    this.loraTarget = components.loraTarget;
    this.controlnets = components.controlnets ?? new Map();
  }

  /** The names of the ControlNets loaded with the pipeline, in load order. */
  get controlnetNames(): readonly string[] {
    return [...this.controlnets.keys()];
  }

  static async fromPretrained(
    dir: string,
    options: FromPretrainedOptions = {},
  ): Promise<StableDiffusionPipeline> {
    // A single-file LDM checkpoint (.safetensors) becomes a diffusers folder once (pickles refused).
    if (existsSync(dir) && statSync(dir).isFile()) dir = singleFileToDiffusers(dir, options.singleFile);
    // Single-file ControlNets become diffusers folders once, like single-file checkpoints.
    const converted = Object.fromEntries(
      Object.entries(options.controlnets ?? {}).map(([name, path]) => [
        name,
        existsSync(path) && statSync(path).isFile()
          ? controlNetSingleFileToDiffusers(path, options.singleFile?.cacheDir)
          : path,
      ]),
    );
    const controlnets = options.skipUnfitControlNets
      ? controlNetsFittingFolder(dir, converted, options.log ?? console.warn)
      : converted;
    const backend = await selectBackend(options.backend, options.log);
    // The TF.js engine's models are loaded only when it is chosen: onnxruntime runs without TF.js.
    const components: EngineComponents =
      backend.name === 'onnxruntime'
        ? await loadOnnxComponents(dir, {
            ...options.onnx,
            variant: options.variant,
            vaeTiny: options.vaeTiny,
            controlnets,
            log: options.log,
          })
        : (await import('./components.js')).loadComponents(dir, { ...options, controlnets });
    const unexpected = Object.entries(components.unexpectedWeights).filter(([, v]) => v.length > 0);
    for (const [component, names] of unexpected)
      (options.log ?? console.warn)(
        `@tiffin/diffusion: ${component} has ${names.length} unused tensors (e.g. ${names[0]})`,
      );
    return new StableDiffusionPipeline(
      components,
      backend,
      mergeDefaults(readModelDefaults(dir), options.defaults),
    );
  }

  /** The unet's own output size: unet.sample_size × VAE scale factor (512 for SD1.x, 768 for SD2 768-v, 1024 for SDXL). */
  get defaultSize(): number {
    return this.unet.config.sample_size * this.vae.scaleFactor;
  }

  /** Whose parameter defaults apply (SDXL: guidance 5, img2img strength 0.3, as diffusers' SDXL pipelines). */
  get family(): PipelineFamily {
    return this.sdxl ? 'sdxl' : 'sd';
  }

  /**
   * Prompt embeddings [1, 77 × chunks, D] (SD 1.x/2.x), read as A1111 does unless `weighting` is false (then
   * [1, 77, D], diffusers' reading); `lora` adds an unfused LoRA's branches.
   */
  async encodePrompt(text: string, clipSkip = 0, lora?: RuntimeLora, weighting = true): Promise<HostTensor> {
    const component = lora && { runtime: lora, component: 'text_encoder' as const };
    return (await encodeSdPrompt(this, text, clipSkip, component, weighting)).embeds;
  }

  /** text2img: the shared seams with noise as the starting latents. */
  async text2img(request: Text2ImgRequest): Promise<GenerationResult> {
    this.refuseInpaintingUnet('text2img');
    const defaults = this.requestDefaults(request);
    const params = validateParameters(
      text2imgParameters(NO_LIMITS, this.defaultSize, this.family, defaults),
      withPromptDefault(request),
    );
    return this.generate(request, params, defaults, 'text2img', (run) =>
      text2imgLatents(
        run,
        { scaleFactor: this.vae.scaleFactor, channels: this.unet.config.in_channels },
        request.latents,
      ),
    );
  }

  /** img2img: the shared seams starting from the noised latents of the request's image (or its `init_latents`). */
  async img2img(request: Img2ImgRequest): Promise<GenerationResult> {
    this.refuseInpaintingUnet('img2img');
    const source = this.img2imgSource(request);
    const defaults = this.requestDefaults(request);
    const params = validateParameters(
      img2imgParameters(NO_LIMITS, this.family, defaults),
      withPromptDefault(request),
    );
    const [height, width] =
      'shape' in source
        ? source.shape.slice(1, 3).map((s) => s * this.vae.scaleFactor)
        : [source.height, source.width];
    return this.generate(request, { ...params, height, width }, defaults, 'img2img', (run) =>
      img2imgLatents(run, this.vae, source, params.strength, request.second_pass === true),
    );
  }

  /** What img2img starts from: the image, or the given latents (NCHW) as NHWC. */
  private img2imgSource(request: Img2ImgRequest): RgbImage | HostTensor {
    const given = request.init_latents;
    if (!given) {
      if (!request.image) throw new InvalidArgument('img2img needs an image');
      return request.image;
    }
    const channels = this.unet.config.in_channels;
    if (given.shape.length !== 4 || given.shape[1] !== channels)
      throw new InvalidArgument(`init_latents must be NCHW with ${channels} channels`);
    return transpose(hostTensor(given.data, given.shape), NCHW_TO_NHWC);
  }

  /** The defaults a request's left-out fields take: the model's, then its LoRAs' own, in order. */
  private requestDefaults(request: CommonRequest): ModelDefaults {
    return mergeDefaults(this.defaults, ...requestLoras(request.lora).map((l) => l.defaults));
  }

  /**
   * Inpainting: repaint the white part of `mask_image` (diffusers' `StableDiffusionInpaintPipeline`), with an
   * inpainting UNet (9 input channels) where the folder has one, else by blending the kept part's latents
   * after every step. SD 1.x/2.x.
   */
  async inpaint(request: InpaintRequest): Promise<GenerationResult> {
    if (!request.image) throw new InvalidArgument('inpainting needs an image');
    if (!request.mask_image) throw new InvalidArgument('inpainting needs a mask_image');
    const defaults = this.requestDefaults(request);
    const params = validateParameters(
      inpaintParameters(NO_LIMITS, this.family, defaults),
      withPromptDefault(request),
    );
    const { image, mask_image } = request;
    return this.generate(
      request,
      { ...params, height: image.height, width: image.width },
      defaults,
      'img2img',
      (run) =>
        inpaintLatents(run, this.vae, this.unet.config.in_channels, image, mask_image, params.strength),
    );
  }

  /** An inpainting UNet needs a mask and a masked image at every step: it runs `inpaint` only. */
  private refuseInpaintingUnet(kind: string): void {
    if (this.unet.config.in_channels === INPAINT_UNET_CHANNELS)
      throw new InvalidArgument(
        `this is an inpainting model (a 9-channel UNet): it runs inpaint, not ${kind}`,
      );
  }

  /**
   * The seams every pipeline of this family composes: encode the prompt, prepare latents (the one seam
   * text2img and img2img differ in), denoise, decode. The run owns every tensor and the LoRA state, and
   * releases them whatever happens.
   */
  private async generate(
    request: CommonRequest,
    params: GenerationParameters & { height: number; width: number },
    defaults: ModelDefaults,
    kind: PipelineKind,
    prepareLatents: (run: GenerationRun) => DenoiseStart | Promise<DenoiseStart>,
  ): Promise<GenerationResult> {
    const decoder = this.decoderFor(params);
    const guided = params.guidance_scale > 1;
    const controls = await prepareControlNets(request.controlnet, this.controlnets, {
      width: params.width,
      height: params.height,
      batch: params.num_images_per_prompt,
      guided,
    });
    const run = this.begin(request, params, {
      ...defaults.scheduler_config,
      ...request.scheduler_config,
    });
    try {
      const { conditioning, promptTruncated } = this.sdxl
        ? await sdxlConditioning(this, this.sdxl, run, kind)
        : await sdConditioning(this, run);
      const start = await prepareLatents(run);
      if (controls.length)
        conditioning.control = (i, n, input, timestep) =>
          controlNetResiduals(controls, i, n, { input, timestep, guided, ...conditioning });
      const latents = await denoise(this.unet, run, conditioning, start);
      const images = await this.decode(run, latents, decoder);
      const result: GenerationResult = {
        images,
        seed: run.seed,
        seeds: images.map((_, k) => imageSeed(run.seed, k)),
        scheduler: run.schedulerName,
        timesteps: start.timesteps,
        promptTruncated,
      };
      if (request.return_latents) {
        const nchw = transpose(latents, NHWC_TO_NCHW);
        result.latents = { shape: [...nchw.shape], data: nchw.data };
      }
      return result;
    } finally {
      run.dispose();
      this.inFlight--;
    }
  }

  /** A run for `params`: scheduler set to its timesteps, seeded noise, the request's LoRAs applied. */
  private begin(
    request: CommonRequest,
    params: GenerationParameters & { height: number; width: number },
    schedulerConfig: SchedulerConfig = {},
  ): GenerationRun {
    const schedulerName = params.scheduler ?? this.defaultScheduler;
    const seed = params.seed ?? Math.floor(Math.random() * 2 ** 32);
    const loras = requestLoras(request.lora);
    const fusing = loras.some((l) => (l.mode ?? 'fused') === 'fused');
    if (this.fusedInFlight || (fusing && this.inFlight > 0))
      throw new ServiceUnavailable(
        'a fused LoRA needs the pipeline to itself: another generation is running (serialise requests or use lora mode "unfused")',
      );
    // The defaults' scheduler keys (e.g. trailing spacing) overlay the folder's, whichever scheduler runs.
    const scheduler = createScheduler(schedulerName, {
      ...this.schedulerConfig,
      ...schedulerConfig,
      ...requestSchedulerKeys(params, schedulerName),
    });
    scheduler.setTimesteps(params.num_inference_steps);
    const runtime: RuntimeLora[] = [];
    const fused: AppliedLora[] = [];
    this.inFlight++;
    try {
      // The request's LoRAs (docs/spec/diffusion.md §9.3/9.4): merged now and restored when the run ends, or run-time.
      if (fusing) this.fusedInFlight = true;
      for (const lora of loras) {
        const options = { scale: lora.scale, onUnmatched: lora.onUnmatched };
        if ((lora.mode ?? 'fused') === 'fused') fused.push(mergeLora(this.loraTarget, lora.file, options));
        else runtime.push(prepareRuntimeLora(this.loraTarget, lora.file, options));
      }
    } catch (e) {
      for (const applied of fused.reverse()) applied.unmerge();
      for (const r of runtime) r.dispose();
      scheduler.dispose();
      if (fusing) this.fusedInFlight = false;
      this.inFlight--;
      throw e;
    }
    const run = new GenerationRun(
      params,
      scheduler,
      schedulerName,
      seed,
      new NoiseDraws(seed, request.noise),
      runtime.length > 0 ? combineRuntimeLoras(runtime) : undefined,
      request,
    );
    run.atEnd(() => {
      for (const applied of fused.reverse()) applied.unmerge();
      if (fusing) this.fusedInFlight = false;
    });
    return run;
  }

  /**
   * A preview of NHWC latents after `step` of `totalSteps`: with a tiny decoder, the first image decoded by it
   * (at most 256 px a side) on every ⌈total/4⌉-th step and the last, none on the others; without one, the
   * latent-size linear approximation on every step.
   */
  async preview(latents: HostTensor, step: number, totalSteps: number): Promise<PreviewImage | undefined> {
    if (!this.tinyDecoder) return latentPreview(latents, this.family);
    if (!isPreviewStep(step, totalSteps)) return undefined;
    return decodedPreview(this.tinyDecoder, div(latents, this.tinyDecoder.config.scaling_factor));
  }

  /** The request's decoder (checked before any work): `tiny` needs one loaded; the default is tiny when loaded. */
  private decoderFor(params: GenerationParameters): VaeModel | TinyDecoderModel {
    const choice = params.decoder ?? (this.tinyDecoder ? 'tiny' : 'full');
    if (choice === 'full') return this.vae;
    if (!this.tinyDecoder)
      throw new InvalidArgument(
        'decoder "tiny" needs a tiny autoencoder loaded at start (--vae-tiny); this server has only the full VAE',
      );
    return this.tinyDecoder;
  }

  /** The decode seam: latents → RGB images (and floats on request). */
  private async decode(
    run: GenerationRun,
    latents: HostTensor,
    decoder: VaeModel | TinyDecoderModel,
  ): Promise<GeneratedImage[]> {
    const decoded = await decoder.decodeOnHost(div(latents, decoder.config.scaling_factor));
    const pictures = tensorToImages(decoded);
    const { width, height } = run.params;
    return pictures.map((p) => ({
      width,
      height,
      data: p.data,
      ...(run.request.return_float ? { float: p.float } : {}),
    }));
  }

  dispose(): void {
    this.textEncoder.dispose();
    this.sdxl?.textEncoder2.dispose();
    this.unet.dispose();
    this.vae.dispose();
    this.tinyDecoder?.dispose();
    for (const net of this.controlnets.values()) net.dispose();
  }
}

/**
 * The request's `timestep_spacing` / `use_karras_sigmas` as scheduler config keys. Each must change something for
 * the scheduler that runs: a key its diffusers class does not use is a 400 rather than silently ignored.
 */
function requestSchedulerKeys(params: GenerationParameters, scheduler: SchedulerName): SchedulerConfig {
  const keys: SchedulerConfig = {};
  if (params.timestep_spacing !== null && params.timestep_spacing !== undefined) {
    if (scheduler === 'lcm')
      throw new InvalidArgument(
        'timestep_spacing: the lcm scheduler takes its timesteps from original_inference_steps',
      );
    keys.timestep_spacing = params.timestep_spacing;
  }
  if (params.use_karras_sigmas !== null && params.use_karras_sigmas !== undefined) {
    if (!KARRAS_SCHEDULER_NAMES.includes(scheduler))
      throw new InvalidArgument(
        `use_karras_sigmas applies to the ${KARRAS_SCHEDULER_NAMES.join(', ')} schedulers, not ${scheduler}`,
      );
    keys.use_karras_sigmas = params.use_karras_sigmas;
  }
  return keys;
}

/** The request's LoRAs (one or several), checked. */
function requestLoras(lora: RequestLora | readonly RequestLora[] | undefined): readonly RequestLora[] {
  const list = lora === undefined ? [] : Array.isArray(lora) ? lora : [lora as RequestLora];
  for (const l of list) {
    if (!l.file || !Array.isArray(l.file.modules))
      throw new InvalidArgument('lora.file must be a parsed LoRA file (readLoraFile)');
    if (l.mode !== undefined && l.mode !== 'fused' && l.mode !== 'unfused')
      throw new InvalidArgument(`lora.mode must be "fused" or "unfused", got ${JSON.stringify(l.mode)}`);
  }
  return list;
}

/** Library calls may give `prompt_embeds` instead of a prompt. */
function withPromptDefault<T extends CommonRequest>(request: T): T {
  return request.prompt === undefined && request.prompt_embeds ? { ...request, prompt: '' } : request;
}
