import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { arch, cpus, platform } from 'node:os';
import { join } from 'node:path';
import type { OrtModule, ResolvedRuntime } from '@tiffin/onnx';
import type { InferenceSession } from 'onnxruntime-node';
import type { CachedGraph } from './graph-cache.js';
import { sessionOptions } from './session.js';

/** Bumped when what is saved (or how it is opened) changes, so older optimized copies are ignored. */
const OPTIMIZED_FORMAT_VERSION = 1;
const MODEL_FILE = 'model.onnx';
const DATA_FILE = 'weights.bin';
/** Written last: an optimized copy without it is incomplete (an interrupted first start). */
const DONE_FILE = 'complete';
/**
 * Providers whose optimized graphs ORT can save. Compiling providers (TensorRT, CoreML, QNN...) turn subgraphs into
 * compiled nodes that ORT refuses to serialise, and the others are unmeasured: they open the plain graph each time.
 */
const SAVABLE_PROVIDERS = new Set(['cpu', 'cuda']);

/**
 * What ORT's optimized graph depends on besides the graph itself: the ORT version (its fusions), the
 * execution providers (level `all` assigns provider-specific kernels) and the CPU (the NCHWc layout
 * transform picks its block size from the vector width), so a model store moved to another machine or
 * an upgraded onnxruntime-node never opens a stale copy. Threads do not change the graph.
 */
export function optimizedKey(ort: OrtModule, runtime: ResolvedRuntime): string {
  return createHash('sha256')
    .update(
      JSON.stringify({
        v: OPTIMIZED_FORMAT_VERSION,
        ort: ort.env.versions.common,
        providers: runtime.providers,
        level: sessionOptions(runtime).graphOptimizationLevel,
        cpu: cpus()[0]?.model ?? 'unknown',
        platform: platform(),
        arch: arch(),
      }),
    )
    .digest('hex')
    .slice(0, 16);
}

export interface OpenedSession {
  session: InferenceSession;
  /** `optimized`: opened from the saved optimized copy; `saved`: optimized now and saved; `plain`: neither. */
  from: 'optimized' | 'saved' | 'plain';
}

/**
 * Opens a session for a cached graph. The first open optimizes the graph as usual and has ORT save the
 * result (`optimizedModelFilePath`, weights as external initializers) in `optimized-<key>/` beside it; later
 * opens with the same key load that copy with graph optimizations off, skipping the fusion and layout passes.
 * `cache: false` opens the plain graph and saves nothing. `memoryArena: false` has ORT free each run's buffers
 * instead of keeping them in its CPU arena for the next run.
 */
export async function openOptimizedSession(
  ort: OrtModule,
  graph: CachedGraph,
  runtime: ResolvedRuntime,
  cache: boolean,
  log: (message: string) => void,
  memoryArena = true,
): Promise<OpenedSession> {
  const base = { ...sessionOptions(runtime), ...(memoryArena ? {} : { enableCpuMemArena: false }) };
  const plain = async (): Promise<OpenedSession> => ({
    session: await ort.InferenceSession.create(graph.modelPath, base),
    from: 'plain',
  });
  if (!cache || !runtime.providers.every((p) => SAVABLE_PROVIDERS.has(p))) return plain();
  const dir = join(graph.dir, `optimized-${optimizedKey(ort, runtime)}`);
  if (existsSync(join(dir, DONE_FILE))) {
    try {
      const session = await ort.InferenceSession.create(join(dir, MODEL_FILE), {
        ...base,
        graphOptimizationLevel: 'disabled',
      });
      return { session, from: 'optimized' };
    } catch (e) {
      // A damaged copy (disk full on a past start, files edited): drop it and optimize again.
      log(
        `@tiffin/diffusion: onnxruntime optimized graph ${dir} could not be opened, optimizing again: ${(e as Error).message.split('\n')[0]}`,
      );
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  let session: InferenceSession;
  try {
    mkdirSync(tmp, { recursive: true });
    session = await ort.InferenceSession.create(graph.modelPath, {
      ...base,
      optimizedModelFilePath: join(tmp, MODEL_FILE),
      // ORT session config entries: every initializer of 1 KiB or more goes to one external file (protobuf's
      // 2 GB limit), the rest stays inline.
      extra: {
        session: {
          optimized_model_external_initializers_file_name: DATA_FILE,
          optimized_model_external_initializers_min_size_in_bytes: '1024',
        },
      },
    });
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    // Saving failed (read-only store, disk full, a graph ORT cannot serialise): the session itself may still open. If it does
    // not, this throws the provider's own error, which the caller handles as before.
    log(
      `@tiffin/diffusion: onnxruntime could not save the optimized graph of ${graph.dir}: ${(e as Error).message.split('\n')[0]}`,
    );
    return plain();
  }
  try {
    if (!existsSync(join(tmp, MODEL_FILE))) {
      rmSync(tmp, { recursive: true, force: true });
      return { session, from: 'plain' };
    }
    writeFileSync(join(tmp, DONE_FILE), '');
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } catch (e) {
    // The session is open and valid; only the copy for next time is lost.
    rmSync(tmp, { recursive: true, force: true });
    log(`@tiffin/diffusion: onnxruntime could not keep the optimized graph ${dir}: ${(e as Error).message}`);
    return { session, from: 'plain' };
  }
  return { session, from: 'saved' };
}
