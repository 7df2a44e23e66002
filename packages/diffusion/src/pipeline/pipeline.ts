import { existsSync, statSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { InvalidArgument, ServiceUnavailable } from '@tiffin/core';
import { type BackendChoice, type BackendName, selectBackend } from '../backend.js';
import { loadOnnxComponents, type OnnxLoadOptions } from '../engines/onnx/load.js';
import { mergeLora } from '../lora/merge.js';
import { prepareRuntimeLora, type RuntimeLora } from '../lora/runtime.js';
import type { AppliedLora, LoraTarget } from '../lora/types.js';
import {
  createScheduler,
  GaussianNoise,
  img2imgTimesteps,
  isSchedulerName,
  type NoiseSource,
  type Scheduler,
  type SchedulerName,
  schedulerNameForClass,
} from '../schedulers/index.js';
import type { SchedulerConfig } from '../schedulers/types.js';
import type { ClipTokenizer } from '../tokenizer/clip-tokenizer.js';
import { singleFileToDiffusers } from '../weights/single-file.js';
import type { WeightStore } from '../weights/store.js';
import {
  type EngineComponents,
  type LoadComponentsOptions,
  loadComponents,
  type TextEncoderModel,
  type UNetModel,
  type VaeModel,
} from './components.js';
import { imageToTensor, tensorToImages } from './image.js';
import type {
  CommonRequest,
  GenerationResult,
  Img2ImgRequest,
  InjectedNoise,
  LoraMode,
  NoisePurpose,
  RequestLora,
  Text2ImgRequest,
} from './types.js';
import { PipelineWeightTarget } from './weight-target.js';

export interface FromPretrainedOptions extends LoadComponentsOptions {
  /** Force a backend (else env TIFFIN_TF_BACKEND, else the first that loads). */
  backend?: BackendName;
  /** onnxruntime engine options (execution providers, threads, graph cache). */
  onnx?: Omit<OnnxLoadOptions, 'variant' | 'log'>;
  log?: (message: string) => void;
}

const NCHW_TO_NHWC = [0, 2, 3, 1];
const NHWC_TO_NCHW = [0, 3, 1, 2];

/** Draws in NCHW C order (diffusers layout), delivered as NHWC tensors. */
class NoiseDraws {
  private readonly seeded: GaussianNoise;
  constructor(
    seed: number,
    private readonly injected: InjectedNoise | undefined,
  ) {
    this.seeded = new GaussianNoise(seed);
  }

  /** `nhwc` shape [B, H, W, C] → tensor of draws made for NCHW [B, C, H, W]. */
  draw(purpose: NoisePurpose, nhwc: readonly number[]): tf.Tensor4D {
    const [b, h, w, c] = nhwc;
    const nchw = [b, c, h, w];
    const data = this.injected ? this.injected(purpose, nchw) : this.seeded.fill(b * c * h * w);
    if (data.length !== b * c * h * w)
      throw new Error(`noise source returned ${data.length} values for shape [${nchw}]`);
    return tf.tidy(() =>
      tf.tensor4d(data, nchw as [number, number, number, number]).transpose(NCHW_TO_NHWC),
    ) as tf.Tensor4D;
  }

  schedulerSource(): NoiseSource {
    return (shape) => this.draw('scheduler', shape);
  }
}

function intOption(v: number | undefined, def: number, name: string, min: number): number {
  const x = v ?? def;
  if (!Number.isInteger(x) || x < min)
    throw new InvalidArgument(`${name} must be an integer ≥ ${min}, got ${v}`);
  return x;
}

function numberOption(v: number | undefined, def: number, name: string): number {
  const x = v ?? def;
  if (typeof x !== 'number' || !Number.isFinite(x))
    throw new InvalidArgument(`${name} must be a finite number, got ${v}`);
  return x;
}

/** Stable Diffusion 1.x / 2.x text-to-image and image-to-image on onnxruntime or TensorFlow.js. */
export class StableDiffusionPipeline {
  readonly tokenizer: ClipTokenizer;
  readonly textEncoder: TextEncoderModel;
  readonly unet: UNetModel;
  readonly vae: VaeModel;
  readonly schedulerConfig: SchedulerConfig;
  /** The folder's scheduler (`_class_name`), used when a request names none. */
  readonly defaultScheduler: SchedulerName;
  /** LoRA merge target (`unet.*`, `text_encoder.*` weights). */
  readonly loraTarget: LoraTarget;
  /** Generations in flight, and whether one of them has a LoRA fused into the shared weights. */
  private inFlight = 0;
  private fusedInFlight = false;

  constructor(
    components: EngineComponents,
    readonly backend: BackendChoice | null = null,
  ) {
    this.tokenizer = components.tokenizer;
    this.textEncoder = components.textEncoder;
    this.unet = components.unet;
    this.vae = components.vae;
    this.schedulerConfig = components.schedulerConfig;
    const name = schedulerNameForClass(components.schedulerConfig._class_name);
    if (!name)
      throw new InvalidArgument(`scheduler class ${components.schedulerConfig._class_name} is not supported`);
    this.defaultScheduler = name;
    this.loraTarget =
      components.loraTarget ??
      new PipelineWeightTarget({
        unet: (this.unet as { weights: WeightStore }).weights,
        text_encoder: (this.textEncoder as { weights: WeightStore }).weights,
      });
  }

  static async fromPretrained(
    dir: string,
    options: FromPretrainedOptions = {},
  ): Promise<StableDiffusionPipeline> {
    // A single-file LDM checkpoint (.safetensors) becomes a diffusers folder once (pickles refused).
    if (existsSync(dir) && statSync(dir).isFile()) dir = singleFileToDiffusers(dir);
    const backend = await selectBackend(options.backend, options.log);
    const components: EngineComponents =
      backend.name === 'onnxruntime'
        ? await loadOnnxComponents(dir, { ...options.onnx, variant: options.variant, log: options.log })
        : loadComponents(dir, options);
    const unexpected = Object.entries(components.unexpectedWeights).filter(([, v]) => v.length > 0);
    for (const [component, names] of unexpected)
      (options.log ?? console.warn)(
        `@tiffin/diffusion: ${component} has ${names.length} unused tensors (e.g. ${names[0]})`,
      );
    return new StableDiffusionPipeline(components, backend);
  }

  /** Default output size: unet.sample_size × VAE scale factor (512 for SD1.x, 768 for SD2 768-v). */
  get defaultSize(): number {
    return this.unet.config.sample_size * this.vae.scaleFactor;
  }

  /** Prompt embeddings [1, 77, D] (caller disposes); `lora` adds an unfused LoRA's branches. */
  async encodePrompt(text: string, clipSkip = 0, lora?: RuntimeLora): Promise<tf.Tensor3D> {
    const out = await this.textEncoder.encode(
      [this.tokenizer.encode(text)],
      clipSkip,
      lora?.component('text_encoder'),
    );
    return out.lastHiddenState;
  }

  async text2img(request: Text2ImgRequest): Promise<GenerationResult> {
    const size = this.defaultSize;
    const height = intOption(request.height, size, 'height', 8);
    const width = intOption(request.width, size, 'width', 8);
    if (height % 8 !== 0 || width % 8 !== 0)
      throw new InvalidArgument(`height and width must be multiples of 8, got ${height}×${width}`);
    return this.generate(request, { height, width });
  }

  async img2img(request: Img2ImgRequest): Promise<GenerationResult> {
    if (!request.image) throw new InvalidArgument('img2img needs an image');
    const strength = numberOption(request.strength, 0.8, 'strength');
    if (strength < 0 || strength > 1)
      throw new InvalidArgument(`strength must be in [0, 1], got ${strength}`);
    return this.generate(request, { height: request.image.height, width: request.image.width, strength });
  }

  private async generate(
    request: CommonRequest & { latents?: Float32Array; image?: Img2ImgRequest['image'] },
    size: { height: number; width: number; strength?: number },
  ): Promise<GenerationResult> {
    if (typeof request.prompt !== 'string' && !request.prompt_embeds)
      throw new InvalidArgument('prompt must be a string');
    const steps = intOption(request.num_inference_steps, 50, 'num_inference_steps', 1);
    const guidance = numberOption(request.guidance_scale, 7.5, 'guidance_scale');
    const eta = numberOption(request.eta, 0, 'eta');
    const rescale = numberOption(request.guidance_rescale, 0, 'guidance_rescale');
    const perPrompt = intOption(request.num_images_per_prompt, 1, 'num_images_per_prompt', 1);
    const clipSkip = intOption(request.clip_skip, 0, 'clip_skip', 0);
    const schedulerName = request.scheduler ?? this.defaultScheduler;
    if (!isSchedulerName(schedulerName))
      throw new InvalidArgument(`unknown scheduler ${JSON.stringify(schedulerName)}`);
    const seed = request.seed ?? Math.floor(Math.random() * 2 ** 32);
    if (!Number.isSafeInteger(seed) || seed < 0)
      throw new InvalidArgument(`seed must be a non-negative integer, got ${request.seed}`);
    const loraMode = requestLoraMode(request.lora);
    if (this.fusedInFlight || (loraMode === 'fused' && this.inFlight > 0))
      throw new ServiceUnavailable(
        'a fused LoRA needs the pipeline to itself: another generation is running (serialise requests or use lora mode "unfused")',
      );
    const cfg = guidance > 1;
    const noise = new NoiseDraws(seed, request.noise);
    const scheduler = createScheduler(schedulerName, this.schedulerConfig);
    const promptTruncated = typeof request.prompt === 'string' && this.tokenizer.isTruncated(request.prompt);

    const f = this.vae.scaleFactor;
    const latentShape = [perPrompt, size.height / f, size.width / f, this.unet.config.in_channels];
    const owned: tf.Tensor[] = [];
    let fused: AppliedLora | undefined;
    let runtime: RuntimeLora | undefined;
    this.inFlight++;
    try {
      // --- the request's LoRA (spec 9.3/9.4): merged now and restored in `finally`, or run-time ---
      if (request.lora) {
        const options = { scale: request.lora.scale, onUnmatched: request.lora.onUnmatched };
        if (loraMode === 'fused') {
          this.fusedInFlight = true;
          fused = mergeLora(this.loraTarget, request.lora.file, options);
        } else runtime = prepareRuntimeLora(this.loraTarget, request.lora.file, options);
      }
      const unetLora = runtime?.component('unet');

      // --- prompt embeddings (negative first, spec 8.1) ---
      const embed = async (text: string | null | undefined, given: CommonRequest['prompt_embeds']) =>
        given ? tf.tensor3d(given.data, given.shape) : this.encodePrompt(text ?? '', clipSkip, runtime);
      const pos = await embed(request.prompt, request.prompt_embeds);
      owned.push(pos);
      const neg = cfg ? await embed(request.negative_prompt, request.negative_prompt_embeds) : null;
      if (neg) owned.push(neg);
      const context = tf.tidy(() => {
        const rep = (t: tf.Tensor3D) => (perPrompt > 1 ? tf.tile(t, [perPrompt, 1, 1]) : tf.clone(t));
        return neg ? tf.concat([rep(neg), rep(pos)], 0) : rep(pos);
      }) as tf.Tensor3D;
      owned.push(context);

      scheduler.setTimesteps(steps);
      let timesteps: number[];
      let latents: tf.Tensor4D;
      if (size.strength === undefined) {
        timesteps = [...scheduler.timesteps];
        let start: tf.Tensor4D;
        if (request.latents) {
          const nchw = [latentShape[0], latentShape[3], latentShape[1], latentShape[2]] as [
            number,
            number,
            number,
            number,
          ];
          if (request.latents.length !== nchw.reduce((a, b) => a * b, 1))
            throw new InvalidArgument(
              `latents must have shape [${nchw.join(', ')}] (${nchw.reduce((a, b) => a * b, 1)} values)`,
            );
          start = tf.tidy(() =>
            tf.tensor4d(request.latents as Float32Array, nchw).transpose(NCHW_TO_NHWC),
          ) as tf.Tensor4D;
        } else start = noise.draw('latents', latentShape);
        latents = tf.tidy(() => tf.mul(start, scheduler.initNoiseSigma)) as tf.Tensor4D;
        start.dispose();
      } else {
        timesteps = img2imgTimesteps(scheduler, steps, size.strength).timesteps;
        const lat0 = await this.encodeImage(request.image as Img2ImgRequest['image'], noise, perPrompt);
        const eps = noise.draw('latents', lat0.shape);
        latents = scheduler.addNoise(lat0, eps, timesteps[0]) as tf.Tensor4D;
        tf.dispose([lat0, eps]);
      }
      owned.push(latents);

      // --- denoising loop ---
      const source = noise.schedulerSource();
      for (let i = 0; i < timesteps.length; i++) {
        const t = timesteps[i];
        const input = cfg ? tf.concat([latents, latents], 0) : tf.clone(latents);
        const scaled = scheduler.scaleModelInput(input, t) as tf.Tensor4D;
        input.dispose();
        const raw = await this.unet.predict(scaled, t, context, unetLora);
        const modelOutput = tf.tidy(() => {
          let m: tf.Tensor = raw;
          if (cfg) {
            const [mu, mc] = tf.split(m, 2, 0);
            const guided = tf.add(mu, tf.mul(tf.sub(mc, mu), guidance));
            m = rescale > 0 ? rescaleGuidance(guided, mc, rescale) : guided;
          }
          return m;
        });
        if (modelOutput !== raw) raw.dispose();
        scaled.dispose();
        const { prevSample } = scheduler.step(modelOutput, t, latents, { noise: source, eta });
        modelOutput.dispose();
        owned.splice(owned.indexOf(latents), 1);
        latents.dispose();
        latents = prevSample as tf.Tensor4D;
        owned.push(latents);
        request.onProgress?.({ step: i + 1, totalSteps: timesteps.length, timestep: t });
        // Let the event loop breathe between steps (health checks, progress streaming).
        await new Promise((r) => setImmediate(r));
      }

      // --- decode ---
      const unscaled = tf.div(latents, this.vae.config.scaling_factor) as tf.Tensor4D;
      const decoded = await this.vae.decode(unscaled);
      unscaled.dispose();
      const pictures = tensorToImages(decoded);
      decoded.dispose();
      const result: GenerationResult = {
        images: pictures.map((p) => ({
          width: size.width,
          height: size.height,
          data: p.data,
          ...(request.return_float ? { float: p.float } : {}),
        })),
        seed,
        scheduler: schedulerName,
        timesteps,
        promptTruncated,
      };
      if (request.return_latents) {
        const nchw = tf.tidy(() => latents.transpose(NHWC_TO_NCHW));
        result.latents = { shape: nchw.shape, data: nchw.dataSync() as Float32Array };
        nchw.dispose();
      }
      return result;
    } finally {
      tf.dispose(owned);
      scheduler.dispose();
      fused?.unmerge();
      runtime?.dispose();
      if (loraMode === 'fused') this.fusedInFlight = false;
      this.inFlight--;
    }
  }

  /** Image → scaled latent sample, repeated `batch` times (spec 8.2). */
  private async encodeImage(
    image: Img2ImgRequest['image'],
    noise: NoiseDraws,
    batch: number,
  ): Promise<tf.Tensor4D> {
    const pixels = imageToTensor(image);
    const { mean, std } = await this.vae.encode(pixels);
    pixels.dispose();
    const eps = noise.draw('vae', mean.shape);
    const lat = tf.tidy(() => {
      const sample = tf.mul(tf.add(mean, tf.mul(std, eps)), this.vae.config.scaling_factor);
      return batch > 1 ? tf.tile(sample, [batch, 1, 1, 1]) : sample;
    }) as tf.Tensor4D;
    tf.dispose([mean, std, eps]);
    return lat;
  }

  dispose(): void {
    this.textEncoder.dispose();
    this.unet.dispose();
    this.vae.dispose();
  }
}

/** The request's LoRA mode (`fused` by default), or null without a LoRA. */
function requestLoraMode(lora: RequestLora | undefined): LoraMode | null {
  if (!lora) return null;
  if (!lora.file || !Array.isArray(lora.file.modules))
    throw new InvalidArgument('lora.file must be a parsed LoRA file (readLoraFile)');
  const mode = lora.mode ?? 'fused';
  if (mode !== 'fused' && mode !== 'unfused')
    throw new InvalidArgument(`lora.mode must be "fused" or "unfused", got ${JSON.stringify(lora.mode)}`);
  return mode;
}

/** guidance_rescale (spec 8.1): std over all non-batch axes. */
function rescaleGuidance(guided: tf.Tensor, cond: tf.Tensor, phi: number): tf.Tensor {
  const axes = [1, 2, 3];
  const stdOf = (t: tf.Tensor) => tf.sqrt(tf.moments(t, axes, true).variance);
  const rescaled = tf.mul(guided, tf.div(stdOf(cond), stdOf(guided)));
  return tf.add(tf.mul(rescaled, phi), tf.mul(guided, 1 - phi));
}
