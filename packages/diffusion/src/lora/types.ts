import type * as tf from '@tensorflow/tfjs';

/**
 * Pipeline components a LoRA can touch, as they prefix base weight names in {@link LoraTarget}
 * (`text_encoder_2` is for SDXL later).
 */
export type LoraComponent = 'unet' | 'text_encoder' | 'text_encoder_2';

/**
 * Opaque saved copy of one base weight, made by {@link LoraTarget.snapshotWeight}; typically a
 * `tf.clone` of the stored tensor (shares storage, so it is cheap). The LoRA code owns it and
 * calls `dispose()` after restoring (or when the restore is abandoned).
 */
export interface WeightSnapshot {
  dispose(): void;
}

/**
 * What a pipeline exposes so a LoRA can be merged into it. Names are diffusers state-dict names
 * with a component prefix: `unet.down_blocks.1.attentions.0.proj_in.weight`,
 * `text_encoder.text_model.encoder.layers.0.self_attn.q_proj.weight`.
 * Shapes and deltas use the torch layout of the files (`[out, in]`, `[out, in, kh, kw]`); the
 * pipeline converts a delta to its own storage layout inside `addDelta`.
 */
export interface LoraTarget {
  /** Every base weight name (at least all Linear and Conv `.weight`s). */
  baseWeightNames(): Iterable<string>;
  /** Torch-layout shape of a base weight, or undefined when there is no such weight. */
  baseWeightShape(name: string): readonly number[] | undefined;
  /**
   * `W ← W + scale · delta` for the named weight. `delta` has the torch-layout shape of W and is
   * owned by the caller (the target must not dispose or keep it).
   */
  addDelta(name: string, delta: tf.Tensor, scale: number): void;
  /**
   * Optional, for bit-exact unmerge: save the current value of a weight. When present (together with
   * `restoreWeight`) the LoRA handle restores saved values instead of subtracting the delta.
   */
  snapshotWeight?(name: string): WeightSnapshot;
  /** Put a saved value back. The snapshot stays owned by the caller, which disposes it afterwards. */
  restoreWeight?(name: string, snapshot: WeightSnapshot): void;
  /**
   * Optional: take the pair itself instead of `up @ down` (`W x + factor · up(down(x))` from now on).
   * Engines whose weights are not writable (onnxruntime) merge this way; `mergeLora` prefers it.
   */
  addLowRank?(name: string, module: LoraFileModule, factor: number): void;
  /** True when the engine takes run-time LoRA branches as host arrays (onnxruntime): no TF.js tensors are made. */
  readonly branchesOnHost?: boolean;
}

/** Which convention a LoRA file follows (docs/spec/diffusion.md §9.1). */
export type LoraLayout =
  /** kohya / A1111: `lora_unet_<path_with_underscores>.lora_down.weight`, `.alpha`. */
  | 'kohya'
  /** diffusers ≤ 0.24: `unet.<path>.lora.down.weight`, `text_encoder.<path>.lora_linear_layer.down.weight`. */
  | 'diffusers'
  /** diffusers attention-processor form: `unet.<attn>.processor.to_q_lora.down.weight`. */
  | 'diffusers_processor'
  /** PEFT: `unet.<path>.lora_A.weight` / `lora_B.weight` (optionally `base_model.model.` prefixed). */
  | 'peft';

/** A dense float32 tensor as read from a file, C order, torch layout. */
export interface LoraArray {
  shape: number[];
  data: Float32Array;
}

/**
 * One low-rank pair from the file, before it is matched to a base weight. `key` is the module key
 * as written in the file without the LoRA suffix (kohya: `lora_unet_..._to_q`; diffusers/PEFT:
 * the dotted module path with its component prefix, processor forms already translated).
 */
export interface LoraFileModule {
  key: string;
  component: LoraComponent;
  /** `[r, in]` or `[r, in, kh, kw]`. */
  down: LoraArray;
  /** `[out, r]` or `[out, r, 1, 1]`. */
  up: LoraArray;
  /** From the file (`.alpha`) or adapter config; null → alpha = rank (factor 1). */
  alpha: number | null;
}

/** A parsed LoRA file, independent of any base model (safe to cache and share read-only). */
export interface LoraFile {
  layout: LoraLayout;
  modules: LoraFileModule[];
  /** safetensors `__metadata__` (kohya training info), empty when absent. */
  metadata: Record<string, string>;
  /** Where it was read from, when read from disk. */
  source?: string;
}

/** A file module matched to a base weight. */
export interface ResolvedLoraModule {
  module: LoraFileModule;
  /** Base weight name in {@link LoraTarget} naming, e.g. `unet.mid_block.attentions.0.proj_in.weight`. */
  weightName: string;
  rank: number;
  /** alpha / rank (1 when the file gives no alpha). */
  alphaScale: number;
}

/** Result of matching a file against a target. */
export interface LoraResolution {
  modules: ResolvedLoraModule[];
  /** File module keys that matched no base weight (or matched one of a different shape), with why. */
  unmatched: { key: string; reason: string }[];
}

export interface ApplyLoraOptions {
  /** Request scale (multiplier), default 1. Final factor = scale · alpha / rank. */
  scale?: number;
  /** What to do with modules that match no base weight: throw (default) or skip and report. */
  onUnmatched?: 'error' | 'skip';
}

/** A LoRA merged into a target; `unmerge()` puts the pre-merge weights back. */
export interface AppliedLora {
  /** Base weight names that were changed. */
  readonly weightNames: readonly string[];
  /** Modules skipped with `onUnmatched: 'skip'`. */
  readonly unmatched: readonly { key: string; reason: string }[];
  /** True when unmerge restores saved copies (bit-exact), false when it subtracts the delta. */
  readonly exactRestore: boolean;
  /** Restores the weights (idempotent). */
  unmerge(): void;
}

/**
 * A low-rank branch added to a Linear or Conv layer at run time (unfused LoRA, docs/spec/diffusion.md §9.3):
 * `y = x·W + (x·down)·up` for a Linear, `y = conv(x, W) + conv1×1(conv(x, down), up)` for a conv,
 * where `down` uses W's kernel, stride and padding. The request scale and alpha/rank are already
 * folded into `up`.
 */
export interface LowRankBranch {
  /** Linear: `[in, r]`; conv: `[kh, kw, in, r]` (tf.conv2d filter layout). */
  readonly down: tf.Tensor;
  /** `[r, out]` for both kinds (a 1×1 conv is a matMul over channels). */
  readonly up: tf.Tensor2D;
}

/** Branches per base weight name of one component (`down_blocks.1.attentions.0.proj_in.weight`). */
export type LowRankBranchesByName = ReadonlyMap<string, readonly LowRankBranch[]>;
