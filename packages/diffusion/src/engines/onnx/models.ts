import type * as tf from '@tensorflow/tfjs';
import type { OrtModule } from '@tiffin/onnx';
import type { InferenceSession, Tensor as OrtTensor } from 'onnxruntime-node';
import { type ClipTextConfig, eosPositions } from '../../architectures/clip-text.js';
import { downPathChannels } from '../../architectures/controlnet.js';
import { timeIdsEmbedding, timestepEmbedding } from '../../architectures/timestep-embedding.js';
import { type TinyAutoencoderConfig, tinyDecoderScaleFactor } from '../../architectures/tiny-autoencoder.js';
import type { UNetConfig } from '../../architectures/unet-config.js';
import { perBlock } from '../../architectures/unet-config.js';
import type { VaeConfig } from '../../architectures/vae.js';
import type { HostTensor } from '../../latents/host-tensor.js';
import { type AnyTensor, asHost, toTf } from '../../latents/tfjs-interop.js';
import type { LowRankBranchesByName } from '../../lora/types.js';
import type {
  ComponentLora,
  HostControlResiduals,
  HostTextTime,
  TextEncoderEngine,
  TinyDecoderEngine,
  UNetEngine,
  VaeEngine,
} from '../engine-models.js';
import type {
  ClipTextOutput,
  LatentDistribution,
  SdxlTextEncoding,
  TextTimeInputs,
} from '../tensor-forms.js';
import type { LoraInputs, RequestBranches } from './lora-inputs.js';
import { SDXL_TEXT_ENCODER_IO, TEXT_ENCODER_INPUT, TEXT_ENCODER_OUTPUT } from './text-encoder-graph.js';
import { TINY_DECODER_IO } from './tiny-decoder-graph.js';
import { UNET_INPUTS, UNET_MID_RESIDUAL, UNET_OUTPUT, unetResidualInput } from './unet-graph.js';
import { VAE_DECODER_IO, VAE_ENCODER_IO } from './vae-graph.js';

/**
 * The SD components on onnxruntime sessions, with the same calls as the tfjs models but asynchronous (a session
 * run returns a promise). The pipeline calls the `…OnHost` methods: host float32 arrays (NHWC) in and out, which
 * the latent maths works on, so no TF.js is loaded. The TF.js-tensor methods (`encode`, `predict`, `decode`) are
 * for TF.js callers and load TF.js.
 */

function toOrt(ort: OrtModule, t: AnyTensor): OrtTensor {
  const h = asHost(t);
  return new ort.Tensor('float32', h.data, [...h.shape]);
}

function fromOrt(t: OrtTensor): HostTensor {
  return { data: (t.data as Float32Array).slice(), shape: [...t.dims] };
}

/** A request's branches for a session: a pipeline's (`ComponentLora`, host arrays) or a caller's map. */
function hostBranches(lora: RequestBranches | ComponentLora | undefined): RequestBranches | undefined {
  if (!lora || lora instanceof Map) return lora as RequestBranches | undefined;
  const { runtime, component } = lora as ComponentLora;
  return runtime.hostComponent(component);
}

export class OnnxTextEncoder implements TextEncoderEngine {
  constructor(
    readonly config: ClipTextConfig,
    private readonly ort: OrtModule,
    private readonly session: InferenceSession,
    readonly lora: LoraInputs,
    /** The session runs `buildSdxlTextEncoderGraph` (SDXL's outputs) rather than `buildTextEncoderGraph`. */
    readonly sdxl = false,
  ) {}

  /** SDXL's outputs: `hidden_states[-2]`, and the projected pooled output when the config projects. */
  async encodeForSdxl(
    ids: readonly (readonly number[])[],
    lora?: LowRankBranchesByName,
  ): Promise<SdxlTextEncoding> {
    const out = await this.encodeForSdxlOnHost(ids, lora);
    return {
      penultimate: toTf<tf.Rank.R3>(out.penultimate),
      textEmbeds: out.textEmbeds && toTf<tf.Rank.R2>(out.textEmbeds),
    };
  }

  async encodeForSdxlOnHost(
    ids: readonly (readonly number[])[],
    lora?: RequestBranches | ComponentLora,
  ): Promise<{ penultimate: HostTensor; textEmbeds: HostTensor | undefined }> {
    if (!this.sdxl) throw new Error('this text encoder session was built for SD 1.x/2.x, not SDXL');
    const io = SDXL_TEXT_ENCODER_IO;
    const B = ids.length;
    const L = ids[0].length;
    const int64 = (values: readonly number[], dims: number[]) =>
      new this.ort.Tensor('int64', BigInt64Array.from(values.map((i) => BigInt(i))), dims);
    const feeds: Record<string, OrtTensor> = {
      [io.ids]: int64(ids.flat(), [B, L]),
      ...this.lora.feeds(hostBranches(lora)),
    };
    const project =
      this.config.projection_dim !== undefined && this.session.inputNames.includes(io.eosPositions);
    if (project) feeds[io.eosPositions] = int64(eosPositions(this.config, ids), [B]);
    const out = await this.session.run(feeds);
    const penultimate = {
      data: (out[io.penultimate].data as Float32Array).slice(),
      shape: [B, L, this.config.hidden_size],
    };
    const textEmbeds = project
      ? {
          data: (out[io.textEmbeds].data as Float32Array).slice(),
          shape: [B, this.config.projection_dim as number],
        }
      : undefined;
    for (const t of Object.values(out)) t.dispose();
    return { penultimate, textEmbeds };
  }

  /** Token ids [B][L] → last hidden state (or final_layer_norm(hidden_states[-(k+1)]) for clip skip k). */
  async encode(
    ids: readonly (readonly number[])[],
    clipSkip = 0,
    lora?: LowRankBranchesByName,
  ): Promise<ClipTextOutput> {
    return { lastHiddenState: toTf<tf.Rank.R3>(await this.encodeOnHost(ids, clipSkip, lora)) };
  }

  async encodeOnHost(
    ids: readonly (readonly number[])[],
    clipSkip = 0,
    lora?: RequestBranches | ComponentLora,
  ): Promise<HostTensor> {
    const B = ids.length;
    const L = ids[0].length;
    if (this.sdxl) throw new Error('this text encoder session was built for SDXL: use encodeForSdxl');
    const layers = this.config.num_hidden_layers;
    if (clipSkip < 0 || clipSkip >= layers) throw new RangeError(`clip_skip must be in [0, ${layers - 1}]`);
    const input = new this.ort.Tensor('int64', BigInt64Array.from(ids.flat().map((i) => BigInt(i))), [B, L]);
    const out = await this.session.run({
      [TEXT_ENCODER_INPUT]: input,
      ...this.lora.feeds(hostBranches(lora)),
    });
    const all = out[TEXT_ENCODER_OUTPUT];
    const size = B * L * this.config.hidden_size;
    const index = layers - clipSkip;
    const data = (all.data as Float32Array).slice(index * size, (index + 1) * size);
    all.dispose();
    return { data, shape: [B, L, this.config.hidden_size] };
  }

  dispose(): void {
    void this.session.release();
  }
}

export class OnnxUNet implements UNetEngine {
  private readonly zeroResiduals = new Map<string, OrtTensor>();

  constructor(
    readonly config: UNetConfig,
    private readonly ort: OrtModule,
    private readonly session: InferenceSession,
    readonly lora: LoraInputs,
  ) {}

  /** sample NHWC [B, h, w, 4], timestep, context [B, 77, Dc] → NHWC prediction, as TF.js tensors. */
  async predict(
    sample: tf.Tensor4D,
    timestep: number,
    context: tf.Tensor3D,
    lora?: LowRankBranchesByName,
    textTime?: TextTimeInputs,
  ): Promise<tf.Tensor4D> {
    return toTf<tf.Rank.R4>(await this.predictOnHost(sample, timestep, context, lora, textTime));
  }

  /** The same on host arrays (TF.js tensors are read). */
  async predictOnHost(
    sample: AnyTensor,
    timestep: number,
    context: AnyTensor,
    lora?: RequestBranches | ComponentLora,
    textTime?: HostTextTime | TextTimeInputs,
    control?: HostControlResiduals,
  ): Promise<HostTensor> {
    const c = this.config;
    const C0 = c.block_out_channels[0];
    const flip = c.flip_sin_to_cos ?? true;
    const emb = timestepEmbedding(timestep, C0, flip, c.freq_shift ?? 0);
    const added: Record<string, OrtTensor> = {};
    if (textTime) {
      const Dt = c.addition_time_embed_dim ?? 0;
      const ids = timeIdsEmbedding(textTime.timeIds, Dt, flip, c.freq_shift ?? 0);
      added[UNET_INPUTS.textEmbeds] = toOrt(this.ort, textTime.textEmbeds);
      added[UNET_INPUTS.timeIds] = new this.ort.Tensor('float32', ids, [
        textTime.timeIds.length,
        ids.length / textTime.timeIds.length,
      ]);
    }
    if (this.session.inputNames.includes(UNET_MID_RESIDUAL))
      Object.assign(added, this.residualFeeds(asHost(sample).shape, control));
    else if (control) throw new Error('this UNet session was built without ControlNet residual inputs');
    const out = await this.session.run({
      ...added,
      [UNET_INPUTS.sample]: toOrt(this.ort, sample),
      [UNET_INPUTS.timeProj]: new this.ort.Tensor('float32', emb, [1, C0]),
      [UNET_INPUTS.context]: toOrt(this.ort, context),
      ...this.lora.feeds(hostBranches(lora)),
    });
    return fromOrt(out[UNET_OUTPUT]);
  }

  /** A ControlNet-ready graph's residual inputs: the given ones, or zeros (a step without control) shaped as its skips. */
  private residualFeeds(
    shape: readonly number[],
    control: HostControlResiduals | undefined,
  ): Record<string, OrtTensor> {
    const feeds: Record<string, OrtTensor> = {};
    if (control) {
      control.down.forEach((d, k) => {
        feeds[unetResidualInput(k)] = toOrt(this.ort, d);
      });
      feeds[UNET_MID_RESIDUAL] = toOrt(this.ort, control.mid);
      return feeds;
    }
    const [B, H, W] = shape;
    // Zeros for the latest sample shape only (a different size drops the others).
    if (!this.zeroResiduals.has(`${B}x${H}x${W}x${this.config.block_out_channels[0]}`))
      this.zeroResiduals.clear();
    const c = this.config;
    const N = c.block_out_channels.length;
    const layers = perBlock(c.layers_per_block, N);
    // Each level's size: a stride-2, padding-1 conv halves rounding up.
    const sizes = [[H, W]];
    for (let i = 1; i < N; i++) sizes.push(sizes[i - 1].map((d) => Math.ceil(d / 2)));
    const levels = [0];
    for (let i = 0; i < N; i++) {
      for (let j = 0; j < layers[i]; j++) levels.push(i);
      if (i < N - 1) levels.push(i + 1);
    }
    // Read-only inputs: one zero tensor per shape, kept for the next step without control.
    const zeros = (level: number, ch: number) => {
      const [h, w] = sizes[level];
      const key = `${B}x${h}x${w}x${ch}`;
      let t = this.zeroResiduals.get(key);
      if (!t) {
        t = new this.ort.Tensor('float32', new Float32Array(B * h * w * ch), [B, h, w, ch]);
        this.zeroResiduals.set(key, t);
      }
      return t;
    };
    downPathChannels(c).forEach((ch, k) => {
      feeds[unetResidualInput(k)] = zeros(levels[k], ch);
    });
    feeds[UNET_MID_RESIDUAL] = zeros(N - 1, c.block_out_channels[N - 1]);
    return feeds;
  }

  dispose(): void {
    void this.session.release();
  }
}

export class OnnxVae implements VaeEngine {
  constructor(
    readonly config: VaeConfig,
    private readonly ort: OrtModule,
    private readonly decoder: InferenceSession,
    private readonly encoder: InferenceSession,
  ) {}

  get scaleFactor(): number {
    return 2 ** (this.config.block_out_channels.length - 1);
  }

  /** Raw decoder output for NHWC latents (already divided by scaling_factor). */
  async decode(z: tf.Tensor4D): Promise<tf.Tensor4D> {
    return toTf<tf.Rank.R4>(await this.decodeOnHost(z));
  }

  async decodeOnHost(z: AnyTensor): Promise<HostTensor> {
    const out = await this.decoder.run({ [VAE_DECODER_IO.input]: toOrt(this.ort, z) });
    return fromOrt(out[VAE_DECODER_IO.output]);
  }

  /** NHWC image in [-1, 1] → latent mean and std (NHWC). */
  async encode(x: tf.Tensor4D): Promise<LatentDistribution> {
    const { mean, std } = await this.encodeOnHost(x);
    return { mean: toTf<tf.Rank.R4>(mean), std: toTf<tf.Rank.R4>(std) };
  }

  async encodeOnHost(x: AnyTensor): Promise<{ mean: HostTensor; std: HostTensor }> {
    const out = await this.encoder.run({ [VAE_ENCODER_IO.input]: toOrt(this.ort, x) });
    return { mean: fromOrt(out[VAE_ENCODER_IO.mean]), std: fromOrt(out[VAE_ENCODER_IO.std]) };
  }

  dispose(): void {
    void this.decoder.release();
    void this.encoder.release();
  }
}

export class OnnxTinyDecoder implements TinyDecoderEngine {
  constructor(
    readonly config: TinyAutoencoderConfig,
    private readonly ort: OrtModule,
    private readonly session: InferenceSession,
  ) {}

  get scaleFactor(): number {
    return tinyDecoderScaleFactor(this.config);
  }

  async decodeOnHost(z: AnyTensor): Promise<HostTensor> {
    const out = await this.session.run({ [TINY_DECODER_IO.input]: toOrt(this.ort, z) });
    return fromOrt(out[TINY_DECODER_IO.output]);
  }

  dispose(): void {
    void this.session.release();
  }
}
