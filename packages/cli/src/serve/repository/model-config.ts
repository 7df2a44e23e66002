import { readFile, stat } from 'node:fs/promises';

/** Read a small text file, bounded before it is read (a config is never large); null when there is none. */
async function readSmallFile(path: string, max: number): Promise<string | null> {
  const info = await stat(path).catch(() => null);
  if (!info) return null;
  if (info.size > max) throw new Error(`tiffin-model.json is larger than ${max} bytes`);
  return readFile(path, 'utf8');
}

/**
 * Tiffin's own config of one model in a Triton-layout repository (`<name>/tiffin-model.json`,
 * docs/model-repository.md): what `tiffin serve model.onnx` takes as flags, per model.
 */
export interface ModelConfig {
  /** `false` runs each call alone; else the batcher's bounds (defaults 32 rows, 100 ms). */
  readonly batching?: false | { readonly max_batch_size?: number; readonly max_latency_ms?: number };
  /** The outputs to serve, in this order (default all). */
  readonly outputs?: readonly string[];
  /** Runner instances (worker threads) for this model (default: the server's `--instances`). */
  readonly instances?: number;
}

const MAX_CONFIG_BYTES = 64 * 1024;

function positiveInt(value: unknown, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw new Error(`tiffin-model.json: ${what} must be a positive integer`);
  return value as number;
}

/** The config at `path` checked; no file is the empty config. A malformed one says what is wrong. */
export async function readModelConfig(path: string): Promise<ModelConfig> {
  const text = await readSmallFile(path, MAX_CONFIG_BYTES);
  if (text === null) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error('tiffin-model.json is not valid JSON');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new Error('tiffin-model.json must be a JSON object');
  const { batching, outputs, instances, ...rest } = raw as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    throw new Error(
      `tiffin-model.json: unknown field ${JSON.stringify(unknown[0]!.slice(0, 64))} (batching, outputs, instances)`,
    );
  const config: {
    batching?: ModelConfig['batching'];
    outputs?: string[];
    instances?: number;
  } = {};
  if (batching === false) config.batching = false;
  else if (batching !== undefined) {
    if (typeof batching !== 'object' || batching === null || Array.isArray(batching))
      throw new Error('tiffin-model.json: batching must be false or { max_batch_size, max_latency_ms }');
    const b = batching as Record<string, unknown>;
    config.batching = {
      max_batch_size: positiveInt(b.max_batch_size, 'batching.max_batch_size'),
      max_latency_ms: positiveInt(b.max_latency_ms, 'batching.max_latency_ms'),
    };
  }
  if (outputs !== undefined) {
    if (
      !Array.isArray(outputs) ||
      outputs.length === 0 ||
      outputs.some((o) => typeof o !== 'string' || o === '')
    )
      throw new Error('tiffin-model.json: outputs must be a list of output names');
    config.outputs = outputs as string[];
  }
  const n = positiveInt(instances, 'instances');
  if (n !== undefined) config.instances = n;
  return config;
}
