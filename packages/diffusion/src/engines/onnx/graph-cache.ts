import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { modelsDir } from '@tiffin/core/internal';
import {
  GraphBuilder,
  type GraphPrecision,
  type LoraBranchInputs,
  type WeightSource,
} from './graph-builder.js';
import type { OnnxWeights } from './weight-format.js';
import { f16StoragePass } from './weight-passes/f16-storage.js';
import { int8WeightPass } from './weight-passes/int8-weights.js';
import type { WeightPass } from './weight-passes/weight-pass.js';

/** Bumped whenever the graphs this engine writes change, so cached graphs are rebuilt. */
export const GRAPH_FORMAT_VERSION = 1;

/** ai.onnx opset 17 (LayerNormalization); com.microsoft for the fused attention kernel. */
const OPSETS = { '': 17, 'com.microsoft': 1 } as const;

const MODEL_FILE = 'model.onnx';
const DATA_FILE = 'weights.bin';
const BRANCHES_FILE = 'lora-branches.json';

/** Where built graphs are kept: `<model store>/.onnx-graphs` (hidden, so store listings skip it). */
export function defaultGraphCacheDir(): string {
  return process.env.TIFFIN_ONNX_CACHE || join(modelsDir(), '.onnx-graphs');
}

/** The pass that gives each weight storage its form (none: float32 as built). */
const WEIGHT_PASSES: Readonly<Record<OnnxWeights, WeightPass | undefined>> = {
  f32: undefined,
  f16: f16StoragePass,
  int8: int8WeightPass,
};

export interface GraphRequest {
  /** `text_encoder`, `unet`, `vae_decoder`, `vae_encoder`. */
  name: string;
  /** Everything the graph depends on besides the weights' bytes (config, options). */
  key: unknown;
  source: WeightSource & { fingerprint(): string };
  /** Weights that get a low-rank branch (graph inputs) for per-request LoRA. */
  loraTarget: (weightName: string) => boolean;
  /** The float type of weights and activations (default f32). */
  precision?: GraphPrecision;
  /**
   * How an f32 graph stores its weights (default f32): `f16` float16 storage widened at load, `int8` linear and
   * conv weights quantized. Ignored for f16 graphs (already half size; GPU providers keep float kernels).
   */
  weights?: OnnxWeights;
  build(g: GraphBuilder): void;
}

export interface CachedGraph {
  dir: string;
  modelPath: string;
  dataPath: string;
  loraBranches: ReadonlyMap<string, LoraBranchInputs>;
  /** True when this call built it (false: found in the cache). */
  built: boolean;
}

/**
 * The graph for `request`, from the cache when an identical one was built before (same config,
 * options, format version and weight files by path/size/mtime), else built into a temporary
 * folder and renamed into place, so an interrupted build never leaves a half-written graph.
 */
export function ensureGraph(cacheDir: string, request: GraphRequest): CachedGraph {
  const pass = request.precision === 'f16' ? undefined : WEIGHT_PASSES[request.weights ?? 'f32'];
  const hash = createHash('sha256')
    .update(
      JSON.stringify({
        v: GRAPH_FORMAT_VERSION,
        name: request.name,
        key: request.key,
        // Absent for f32 so the hashes of graphs cached before f16 existed stay valid.
        ...(request.precision === 'f16' ? { precision: 'f16' } : {}),
        ...(pass ? { weights: request.weights } : {}),
        files: request.source.fingerprint(),
      }),
    )
    .digest('hex')
    .slice(0, 20);
  const dir = join(cacheDir, `${request.name}-${hash}`);
  const paths = { modelPath: join(dir, MODEL_FILE), dataPath: join(dir, DATA_FILE) };
  if (existsSync(paths.modelPath) && existsSync(join(dir, BRANCHES_FILE))) {
    const entries = JSON.parse(readFileSync(join(dir, BRANCHES_FILE), 'utf8')) as [
      string,
      LoraBranchInputs,
    ][];
    return { dir, ...paths, loraBranches: new Map(entries), built: false };
  }
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  mkdirSync(tmp, { recursive: true });
  try {
    const g = new GraphBuilder(
      request.name,
      request.source,
      join(tmp, DATA_FILE),
      request.loraTarget,
      request.precision,
    );
    try {
      request.build(g);
    } catch (e) {
      g.abandon();
      throw e;
    }
    writeFileSync(join(tmp, MODEL_FILE), g.finish(OPSETS, pass));
    writeFileSync(join(tmp, BRANCHES_FILE), JSON.stringify([...g.loraBranches]));
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    return { dir, ...paths, loraBranches: g.loraBranches, built: true };
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}
