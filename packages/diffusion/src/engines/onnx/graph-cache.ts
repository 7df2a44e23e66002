import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { modelsDir } from '@tiffin/core/internal';
import { GraphBuilder, type LoraBranchInputs, type WeightSource } from './graph-builder.js';

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

export interface GraphRequest {
  /** `text_encoder`, `unet`, `vae_decoder`, `vae_encoder`. */
  name: string;
  /** Everything the graph depends on besides the weights' bytes (config, options). */
  key: unknown;
  source: WeightSource & { fingerprint(): string };
  /** Weights that get a low-rank branch (graph inputs) for per-request LoRA. */
  loraTarget: (weightName: string) => boolean;
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
  const hash = createHash('sha256')
    .update(
      JSON.stringify({
        v: GRAPH_FORMAT_VERSION,
        name: request.name,
        key: request.key,
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
    const g = new GraphBuilder(request.name, request.source, join(tmp, DATA_FILE), request.loraTarget);
    try {
      request.build(g);
    } catch (e) {
      g.abandon();
      throw e;
    }
    writeFileSync(join(tmp, MODEL_FILE), g.finish(OPSETS));
    writeFileSync(join(tmp, BRANCHES_FILE), JSON.stringify([...g.loraBranches]));
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    return { dir, ...paths, loraBranches: g.loraBranches, built: true };
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}
