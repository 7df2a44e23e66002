import { basename, join } from 'node:path';
import { loadOrt, type OnnxRuntimeOptions, type ResolvedRuntime, resolveRuntime } from '@tiffin/onnx';
import type { InferenceSession } from 'onnxruntime-node';
import { clipTextWeightSpecs } from '../../architectures/clip-text.js';
import { controlNetWeightSpecs } from '../../architectures/controlnet.js';
import { tinyDecoderWeightSpecs } from '../../architectures/tiny-autoencoder.js';
import { unetWeightSpecs } from '../../architectures/unet.js';
import { vaeWeightSpecs } from '../../architectures/vae.js';
import type { SchedulerConfig } from '../../schedulers/types.js';
import type { ClipTokenizer } from '../../tokenizer/clip-tokenizer.js';
import {
  componentWeightFiles,
  legacyAliases,
  ModelFolderError,
  type ModelIndex,
} from '../../weights/folder.js';
import { checkedShape, type WeightSpec } from '../../weights/weight-spec.js';
import {
  readControlNetFolder,
  readPipelineFolderConfigs,
  readTinyAutoencoderFolder,
} from '../folder-configs.js';
import { buildControlNetGraph } from './controlnet-graph.js';
import { OnnxControlNet } from './controlnet-model.js';
import type { GraphPrecision, SourceTensor, WeightSource } from './graph-builder.js';
import { type CachedGraph, defaultGraphCacheDir, ensureGraph } from './graph-cache.js';
import { LoraInputs } from './lora-inputs.js';
import { OnnxLoraTarget } from './lora-target.js';
import { OnnxTextEncoder, OnnxTinyDecoder, OnnxUNet, OnnxVae } from './models.js';
import type { AttentionKind } from './onnx-ops.js';
import { type OpenedSession, openOptimizedSession } from './optimized-cache.js';
import { buildSdxlTextEncoderGraph, buildTextEncoderGraph } from './text-encoder-graph.js';
import { buildTinyDecoderGraph } from './tiny-decoder-graph.js';
import { buildUNetGraph } from './unet-graph.js';
import { buildVaeDecoderGraph, buildVaeEncoderGraph } from './vae-graph.js';
import { type OnnxWeights, parseOnnxWeights } from './weight-format.js';
import { SafetensorsWeightSource } from './weight-source.js';

export interface OnnxLoadOptions extends OnnxRuntimeOptions {
  variant?: string;
  /** Where built graphs are cached (default `<model store>/.onnx-graphs`, env `TIFFIN_ONNX_CACHE`). */
  cacheDir?: string;
  /** Attention as com.microsoft MultiHeadAttention (`fused`, default) or standard ops. */
  attention?: AttentionKind;
  /**
   * Keep ORT's optimized form of each graph beside it and open that on later starts (default true; see
   * `optimized-cache.ts`). False: optimize on every start, save nothing.
   */
  optimizedCache?: boolean;
  /**
   * Float type of the graphs: `f16` halves weight memory and runs the GPU providers' f16 kernels; `f32` is what
   * the CPU provider computes in (it runs an f16 graph by casting around most nodes: valid, but slower).
   * Default `auto`: f16 when the first provider is cuda, tensorrt or dml, else f32.
   */
  precision?: 'auto' | GraphPrecision;
  /**
   * How f32 graphs store weights (`--weights`; default f32): `f16` halves the built graphs on disk (widened to f32
   * when a session opens), `int8` quantizes the UNet's and text encoder's linear and conv weights per output channel
   * (faster CPU steps, a quarter of their memory; the VAE stays f32). f16 graphs (GPU providers) ignore it.
   */
  weights?: OnnxWeights;
  /** A tiny autoencoder folder (TAESD, diffusers `AutoencoderTiny` layout) whose decoder is loaded too. */
  vaeTiny?: string;
  /**
   * ControlNet folders (diffusers `ControlNetModel`) by name: each gets its graph (int8 with `weights: 'int8'`, as
   * the UNet), and the UNet's graph takes their residuals.
   */
  controlnets?: Readonly<Record<string, string>>;
  log?: (message: string) => void;
}

/** SDXL's second text encoder and tokenizer on onnxruntime (docs/spec/diffusion.md §10). */
export interface OnnxSdxlComponents {
  tokenizer2: ClipTokenizer;
  textEncoder2: OnnxTextEncoder;
  /** No negative prompt → zero negative embeddings (model_index.json `force_zeros_for_empty_prompt`). */
  forceZerosForEmptyPrompt: boolean;
}

export interface OnnxComponents {
  index: ModelIndex;
  tokenizer: ClipTokenizer;
  textEncoder: OnnxTextEncoder;
  unet: OnnxUNet;
  vae: OnnxVae;
  /** The tiny autoencoder's decoder, when `vaeTiny` names one. */
  tinyDecoder?: OnnxTinyDecoder;
  schedulerConfig: SchedulerConfig;
  loraTarget: OnnxLoraTarget;
  unexpectedWeights: Record<string, string[]>;
  runtime: ResolvedRuntime;
  /** SDXL's second encoder and tokenizer (an SDXL folder). */
  sdxl?: OnnxSdxlComponents;
  /** The ControlNets given at load, by name. */
  controlnets: ReadonlyMap<string, OnnxControlNet>;
}

/** A weight source that checks every declared weight's presence and torch shape before building. */
class CheckedSource implements WeightSource {
  private readonly specs: ReadonlyMap<string, WeightSpec>;
  constructor(
    private readonly inner: SafetensorsWeightSource,
    specs: readonly WeightSpec[],
  ) {
    this.specs = new Map(specs.map((s) => [s.name, s]));
    for (const s of specs)
      if (!inner.has(s.name))
        throw new ModelFolderError(
          `${inner.component}: weight ${s.name} is missing from ${inner.files.join(', ')}`,
        );
  }
  has(name: string): boolean {
    return this.specs.has(name) && this.inner.has(name);
  }
  /** The file shape, checked against the declaration ([C, C, 1, 1] legacy VAE projections taken as [C, C]). */
  shape(name: string): readonly number[] {
    const file = this.inner.shape(name);
    const spec = this.specs.get(name);
    return spec ? checkedShape(this.inner.component, spec, file) : file;
  }
  read(name: string): SourceTensor {
    const shape = this.shape(name);
    return { shape, data: this.inner.read(name).data };
  }
  fingerprint(): string {
    return this.inner.fingerprint();
  }
}

const loraAble = (specs: readonly WeightSpec[]) => {
  const names = new Set(specs.filter((s) => s.kind !== 'plain').map((s) => s.name));
  return (name: string) => names.has(name);
};

/**
 * Loads a diffusers SD1/SD2/SDXL folder on onnxruntime: each component's graph is built from its
 * config and safetensors (or taken from the cache), then opened as a session.
 */
export async function loadOnnxComponents(
  dir: string,
  options: OnnxLoadOptions = {},
): Promise<OnnxComponents> {
  const log = options.log ?? ((m: string) => console.info(m));
  const ort = await loadOrt();
  const runtime = await resolveRuntime(options);
  for (const line of runtime.skipped)
    log(`@tiffin/diffusion: onnxruntime skipped execution provider ${line}`);
  const { index, teConfig, unetConfig, vaeConfig, schedulerConfig, tokenizer, sdxl } =
    readPipelineFolderConfigs(dir);
  const cacheDir = options.cacheDir ?? defaultGraphCacheDir();
  const attention = options.attention ?? 'fused';
  const precision = graphPrecision(options.precision ?? 'auto', runtime);
  // Checked here too: JavaScript callers pass any string.
  const weights =
    options.weights === undefined ? 'f32' : parseOnnxWeights(String(options.weights), 'onnx.weights');
  if (precision === 'f16' && weights !== 'f32')
    log(
      `@tiffin/diffusion: onnxruntime ${weights} weights apply to f32 graphs (CPU provider); the ${runtime.providers[0]} provider gets f16 graphs`,
    );
  // The VAE decodes pixels directly: int8 there costs visible quality for little time, so it keeps f32 (or f16 storage).
  const weightsOf = (name: string): OnnxWeights =>
    weights === 'int8' && name.startsWith('vae') ? 'f32' : weights;
  const unexpectedWeights: Record<string, string[]> = {};

  const graph = (
    component: string,
    stem: string,
    name: string,
    specs: WeightSpec[],
    config: unknown,
    lora: boolean,
    build: CachedGraphBuild,
    folder = join(dir, component),
    /** Weights in the files the graph does not read on purpose (the tiny autoencoder's encoder). */
    unused = (_name: string) => false,
  ): CachedGraph => {
    const raw = new SafetensorsWeightSource(
      component,
      componentWeightFiles(folder, stem, folder === join(dir, component) ? options.variant : undefined),
    );
    try {
      const source = new CheckedSource(raw, specs);
      // Declared names and the older names of declared weights (legacy VAE attention) are both expected.
      const known = new Set(specs.flatMap((s) => [s.name, ...legacyAliases(s.name)]));
      unexpectedWeights[component] = [...(raw.files.length ? namesOf(raw) : [])].filter(
        (n) => !known.has(n) && !n.endsWith('position_ids') && !unused(n),
      );
      const started = Date.now();
      const g = ensureGraph(cacheDir, {
        name,
        key: { config, attention, lora },
        source,
        loraTarget: lora ? loraAble(specs) : () => false,
        precision,
        weights: weightsOf(name),
        build,
      });
      const stored = precision === 'f32' && weightsOf(name) !== 'f32' ? `, ${weightsOf(name)} weights` : '';
      log(
        `@tiffin/diffusion: onnxruntime ${name} ${precision}${stored} graph ${g.built ? `built in ${Date.now() - started} ms` : 'from cache'} (${g.dir})`,
      );
      return g;
    } finally {
      raw.close();
    }
  };
  const opts = { kind: attention };
  const teSpecs = clipTextWeightSpecs(teConfig);
  const unetSpecs = unetWeightSpecs(unetConfig);
  const vaeSpecs = vaeWeightSpecs(vaeConfig);
  // SDXL reads other outputs of its encoders (penultimate state, projected pooled output): other graphs, other names.
  const teGraph = sdxl
    ? graph('text_encoder', 'model', 'sdxl_text_encoder', teSpecs, teConfig, true, (g) =>
        buildSdxlTextEncoderGraph(g, teConfig, opts, false),
      )
    : graph('text_encoder', 'model', 'text_encoder', teSpecs, teConfig, true, (g) =>
        buildTextEncoderGraph(g, teConfig, opts),
      );
  const te2Specs = sdxl ? clipTextWeightSpecs(sdxl.te2Config, true) : [];
  const te2Graph = sdxl
    ? graph('text_encoder_2', 'model', 'sdxl_text_encoder_2', te2Specs, sdxl.te2Config, true, (g) =>
        buildSdxlTextEncoderGraph(g, sdxl.te2Config, opts, true),
      )
    : undefined;
  const controlled = Object.entries(options.controlnets ?? {});
  // With ControlNets, the UNet's graph takes their residuals as inputs (zeros on steps without control).
  const unetGraph = controlled.length
    ? graph(
        'unet',
        'diffusion_pytorch_model',
        'unet_controlnet',
        unetSpecs,
        { unet: unetConfig, controlResiduals: true },
        true,
        (g) => buildUNetGraph(g, unetConfig, opts, true),
      )
    : graph('unet', 'diffusion_pytorch_model', 'unet', unetSpecs, unetConfig, true, (g) =>
        buildUNetGraph(g, unetConfig, opts),
      );
  const controlGraphs = controlled.map(([name, folder]) => {
    const config = readControlNetFolder(name, folder, unetConfig, sdxl !== undefined);
    const specs = controlNetWeightSpecs(config);
    const built = graph(
      `controlnet ${name}`,
      'diffusion_pytorch_model',
      'controlnet',
      specs,
      config,
      false,
      (g) => buildControlNetGraph(g, config, opts),
      folder,
    );
    return { name, config, built };
  });
  const decGraph = graph('vae', 'diffusion_pytorch_model', 'vae_decoder', vaeSpecs, vaeConfig, false, (g) =>
    buildVaeDecoderGraph(g, vaeConfig, opts),
  );
  const encGraph = graph('vae', 'diffusion_pytorch_model', 'vae_encoder', vaeSpecs, vaeConfig, false, (g) =>
    buildVaeEncoderGraph(g, vaeConfig, opts),
  );

  const tinyConfig = options.vaeTiny ? readTinyAutoencoderFolder(options.vaeTiny, vaeConfig) : undefined;
  const tinyGraph =
    options.vaeTiny && tinyConfig
      ? graph(
          'vae_tiny',
          'diffusion_pytorch_model',
          'vae_tiny_decoder',
          tinyDecoderWeightSpecs(tinyConfig),
          tinyConfig,
          false,
          (g) => buildTinyDecoderGraph(g, tinyConfig, opts),
          options.vaeTiny,
          (n) => n.startsWith('encoder.'),
        )
      : undefined;

  const sessions: InferenceSession[] = [];
  const optimizedCache = options.optimizedCache ?? true;
  const open = async (g: CachedGraph, memoryArena = true) => {
    const started = Date.now();
    let opened: OpenedSession;
    try {
      opened = await openOptimizedSession(ort, g, runtime, optimizedCache, log, memoryArena);
    } catch (e) {
      if (runtime.providers.length === 1) throw e;
      // A GPU provider whose library loads but cannot start (no driver/device): CPU from now on.
      const f16 =
        precision === 'f16'
          ? ' (the f16 graphs now run on CPU, slowly: --ort-providers cpu gives f32 graphs)'
          : '';
      log(
        `@tiffin/diffusion: onnxruntime skipped execution providers ${runtime.providers.slice(0, -1).join(', ')}: ${(e as Error).message.split('\n')[0]}${f16}`,
      );
      runtime.providers = ['cpu'];
      opened = await openOptimizedSession(ort, g, runtime, optimizedCache, log, memoryArena);
    }
    const how = {
      optimized: 'from its saved optimized form',
      saved: 'optimized and saved',
      plain: 'optimized',
    };
    log(
      `@tiffin/diffusion: onnxruntime session ${basename(g.dir)} ${how[opened.from]} in ${Date.now() - started} ms`,
    );
    sessions.push(opened.session);
    return opened.session;
  };
  try {
    const teLora = new LoraInputs(ort, teGraph.loraBranches);
    const unetLora = new LoraInputs(ort, unetGraph.loraBranches);
    const textEncoder = new OnnxTextEncoder(teConfig, ort, await open(teGraph), teLora, sdxl !== undefined);
    let sdxlComponents: OnnxSdxlComponents | undefined;
    if (sdxl && te2Graph) {
      const te2Lora = new LoraInputs(ort, te2Graph.loraBranches);
      const textEncoder2 = new OnnxTextEncoder(sdxl.te2Config, ort, await open(te2Graph), te2Lora, true);
      sdxlComponents = {
        tokenizer2: sdxl.tokenizer2,
        textEncoder2,
        forceZerosForEmptyPrompt: sdxl.forceZerosForEmptyPrompt,
      };
    }
    const unet = new OnnxUNet(unetConfig, ort, await open(unetGraph), unetLora);
    // The VAE runs once per image at full resolution: ORT's arena would keep its largest buffers beside the UNet's
    // for the rest of the process; without it they are freed after each decode (SD1.5 int8, two 512² images: peak RSS
    // 2.77 GB against 3.73 GB, decode time 1.03×). The UNet, run every step, keeps its arena (≈ 1.4× slower steps
    // without).
    const vae = new OnnxVae(vaeConfig, ort, await open(decGraph, false), await open(encGraph, false));
    // Small weights, but full-size activations: like the VAE, no arena kept between decodes.
    const tinyDecoder =
      tinyGraph && tinyConfig
        ? new OnnxTinyDecoder(tinyConfig, ort, await open(tinyGraph, false))
        : undefined;
    const controlnets = new Map<string, OnnxControlNet>();
    for (const { name, config, built } of controlGraphs)
      controlnets.set(name, new OnnxControlNet(config, ort, await open(built)));
    const loraTarget = new OnnxLoraTarget();
    loraTarget.add('unet', unetLora, unetSpecs);
    loraTarget.add('text_encoder', teLora, teSpecs);
    if (sdxlComponents) loraTarget.add('text_encoder_2', sdxlComponents.textEncoder2.lora, te2Specs);
    return {
      sdxl: sdxlComponents,
      index,
      tokenizer,
      textEncoder,
      unet,
      vae,
      tinyDecoder,
      schedulerConfig,
      loraTarget,
      unexpectedWeights,
      runtime,
      controlnets,
    };
  } catch (e) {
    for (const s of sessions) void s.release();
    throw e;
  }
}

/** Providers whose kernels run float16 natively (the CPU provider mostly does not). */
const F16_PROVIDERS = new Set(['cuda', 'tensorrt', 'dml']);

function graphPrecision(choice: 'auto' | GraphPrecision, runtime: ResolvedRuntime): GraphPrecision {
  if (choice !== 'auto') return choice;
  return F16_PROVIDERS.has(runtime.providers[0]) ? 'f16' : 'f32';
}

type CachedGraphBuild = Parameters<typeof ensureGraph>[1]['build'];

function namesOf(source: SafetensorsWeightSource): string[] {
  return source.names();
}
