import { join } from 'node:path';
import { clipTextWeightSpecs } from '../architectures/clip-text.js';
import { controlNetWeightSpecs } from '../architectures/controlnet.js';
import { tinyDecoderWeightSpecs } from '../architectures/tiny-autoencoder.js';
import { unetWeightSpecs } from '../architectures/unet.js';
import { vaeWeightSpecs } from '../architectures/vae.js';
import type { ControlNetEngine } from '../engines/engine-models.js';
import {
  readControlNetFolder,
  readPipelineFolderConfigs,
  readTinyAutoencoderFolder,
} from '../engines/folder-configs.js';
import type { OnnxTextEncoder, OnnxTinyDecoder, OnnxUNet, OnnxVae } from '../engines/onnx/models.js';
import { ClipTextEncoder } from '../engines/tfjs/clip-text-encoder.js';
import { ControlNetModel } from '../engines/tfjs/controlnet.js';
import { TinyDecoder } from '../engines/tfjs/tiny-decoder.js';
import { UNet2DConditionModel } from '../engines/tfjs/unet.js';
import { AutoencoderKL } from '../engines/tfjs/vae.js';
import type { LoraTarget } from '../lora/types.js';
import type { SchedulerConfig } from '../schedulers/types.js';
import type { ClipTokenizer } from '../tokenizer/clip-tokenizer.js';
import { componentWeightFiles, loadWeightsInto, type ModelIndex } from '../weights/folder.js';
import { WeightStore } from '../weights/store.js';
import { PipelineWeightTarget } from './weight-target.js';

/** The text encoder of either engine (tfjs answers at once, onnxruntime with a promise). */
export type TextEncoderModel = ClipTextEncoder | OnnxTextEncoder;
export type UNetModel = UNet2DConditionModel | OnnxUNet;
export type VaeModel = AutoencoderKL | OnnxVae;
export type TinyDecoderModel = TinyDecoder | OnnxTinyDecoder;

/** SDXL's second text encoder and tokenizer, on either engine (docs/spec/diffusion.md §10). */
export interface SdxlComponents {
  tokenizer2: ClipTokenizer;
  textEncoder2: TextEncoderModel;
  /** No negative prompt → zero negative embeddings (model_index.json `force_zeros_for_empty_prompt`). */
  forceZerosForEmptyPrompt: boolean;
}

/** What a pipeline runs on: the tfjs models (`loadComponents`) or the onnxruntime ones. */
export interface EngineComponents {
  /** Present for an SDXL folder: the pipeline then encodes with both encoders and feeds the UNet's text_time. */
  sdxl?: SdxlComponents;
  index: ModelIndex;
  tokenizer: ClipTokenizer;
  textEncoder: TextEncoderModel;
  unet: UNetModel;
  vae: VaeModel;
  /** The tiny autoencoder's decoder (TAESD), when one was given at load. */
  tinyDecoder?: TinyDecoderModel;
  schedulerConfig: SchedulerConfig;
  /** The engine's LoRA view (`unet.*`, `text_encoder.*` weight names). */
  loraTarget: LoraTarget;
  unexpectedWeights: Record<string, string[]>;
  /** The ControlNets loaded beside the pipeline, by the name a request gives (`controlnets`). */
  controlnets?: ReadonlyMap<string, ControlNetEngine>;
}

export interface PipelineComponents extends EngineComponents {
  textEncoder: ClipTextEncoder;
  sdxl?: SdxlComponents & { textEncoder2: ClipTextEncoder };
  unet: UNet2DConditionModel;
  vae: AutoencoderKL;
  tinyDecoder?: TinyDecoder;
  schedulerConfig: SchedulerConfig;
  /** Tensor names in the files that no model uses, per component (logged, not fatal). */
  unexpectedWeights: Record<string, string[]>;
}

export interface LoadComponentsOptions {
  /** Weight file variant, e.g. `fp16` → `diffusion_pytorch_model.fp16.safetensors`. */
  variant?: string;
  /** A tiny autoencoder folder (TAESD, diffusers `AutoencoderTiny` layout) whose decoder is loaded too. */
  vaeTiny?: string;
  /**
   * ControlNets loaded beside the pipeline, by the name requests give them (`controlnet: [{ model }]`): diffusers
   * `ControlNetModel` folders, or single-file `.safetensors` (lllyasviel's `control_model.*` layout).
   */
  controlnets?: Readonly<Record<string, string>>;
}

/** Load a diffusers SD1/SD2/SDXL folder: configs, tokenizer and all weights (once per process). */
export function loadComponents(dir: string, options: LoadComponentsOptions = {}): PipelineComponents {
  const unexpectedWeights: Record<string, string[]> = {};
  const stores: WeightStore[] = [];
  const load = (component: string, stem: string, store: WeightStore, folder?: string) => {
    stores.push(store);
    const files = folder
      ? componentWeightFiles(folder, stem)
      : componentWeightFiles(join(dir, component), stem, options.variant);
    // The tiny autoencoder's encoder is not used (decoding only).
    unexpectedWeights[component] = loadWeightsInto(store, files).unexpected.filter(
      (n) => !(folder && n.startsWith('encoder.')),
    );
    return store;
  };
  try {
    const { index, teConfig, unetConfig, vaeConfig, schedulerConfig, tokenizer, sdxl } =
      readPipelineFolderConfigs(dir);
    const textEncoder = new ClipTextEncoder(
      teConfig,
      load('text_encoder', 'model', new WeightStore('text_encoder', clipTextWeightSpecs(teConfig))),
    );
    const sdxlComponents: PipelineComponents['sdxl'] = sdxl && {
      tokenizer2: sdxl.tokenizer2,
      textEncoder2: new ClipTextEncoder(
        sdxl.te2Config,
        load(
          'text_encoder_2',
          'model',
          new WeightStore('text_encoder_2', clipTextWeightSpecs(sdxl.te2Config, true)),
        ),
      ),
      forceZerosForEmptyPrompt: sdxl.forceZerosForEmptyPrompt,
    };
    const unet = new UNet2DConditionModel(
      unetConfig,
      load('unet', 'diffusion_pytorch_model', new WeightStore('unet', unetWeightSpecs(unetConfig))),
    );
    const vae = new AutoencoderKL(
      vaeConfig,
      load('vae', 'diffusion_pytorch_model', new WeightStore('vae', vaeWeightSpecs(vaeConfig))),
    );
    const tinyConfig = options.vaeTiny ? readTinyAutoencoderFolder(options.vaeTiny, vaeConfig) : undefined;
    const tinyDecoder =
      options.vaeTiny && tinyConfig
        ? new TinyDecoder(
            tinyConfig,
            load(
              'vae_tiny',
              'diffusion_pytorch_model',
              new WeightStore('vae_tiny', tinyDecoderWeightSpecs(tinyConfig)),
              options.vaeTiny,
            ),
          )
        : undefined;
    const controlnets = new Map<string, ControlNetEngine>();
    for (const [name, folder] of Object.entries(options.controlnets ?? {})) {
      const config = readControlNetFolder(name, folder, unetConfig, sdxl !== undefined);
      const store = new WeightStore(`controlnet ${name}`, controlNetWeightSpecs(config));
      stores.push(store);
      unexpectedWeights[`controlnet ${name}`] = loadWeightsInto(
        store,
        componentWeightFiles(folder, 'diffusion_pytorch_model'),
      ).unexpected;
      controlnets.set(name, new ControlNetModel(config, store));
    }
    const loraTarget = new PipelineWeightTarget({
      unet: unet.weights,
      text_encoder: textEncoder.weights,
      ...(sdxlComponents ? { text_encoder_2: sdxlComponents.textEncoder2.weights } : {}),
    });
    return {
      index,
      tokenizer,
      textEncoder,
      unet,
      vae,
      tinyDecoder,
      schedulerConfig,
      loraTarget,
      unexpectedWeights,
      sdxl: sdxlComponents,
      controlnets,
    };
  } catch (e) {
    for (const s of stores) s.dispose();
    throw e;
  }
}
