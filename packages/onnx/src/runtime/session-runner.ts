import type { ModelRunner, NamedTensors } from '@tiffin/core/internal';
import type { InferenceSession } from 'onnxruntime-node';
import { loadOrt, resolveRuntime } from './providers.js';
import { fromOrtTensor, toOrtTensor } from './tensors.js';

/** What one runner instance needs to open its session (structured-cloneable: it crosses into a worker). */
export interface OnnxRunnerInit {
  /** Absolute path of the .onnx file. */
  path: string;
  executionProviders?: readonly string[];
  /** Intra-op threads of this instance's session. */
  threads: number;
  /** The outputs to fetch (the signature's; non-tensor outputs are left out). */
  outputs: readonly string[];
}

export function sessionOptionsFor(providers: string[], threads: number): InferenceSession.SessionOptions {
  return {
    executionProviders: providers,
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    // Fatal only: a run's error reaches the caller (and the server log) as the thrown error.
    logSeverityLevel: 4,
  };
}

/** One ONNX Runtime session as a `ModelRunner`: NDArrays in and out over the same memory where ORT allows. */
export async function openSessionRunner(init: OnnxRunnerInit): Promise<ModelRunner> {
  const ort = await loadOrt();
  const runtime = await resolveRuntime({
    executionProviders: init.executionProviders,
    intraOpThreads: init.threads,
  });
  const session = await ort.InferenceSession.create(
    init.path,
    sessionOptionsFor(runtime.providers, runtime.threads),
  );
  const fetches = [...init.outputs];
  return {
    async run(inputs: NamedTensors): Promise<NamedTensors> {
      const feeds: Record<string, ReturnType<typeof toOrtTensor>> = {};
      for (const [name, array] of Object.entries(inputs)) feeds[name] = toOrtTensor(ort, array);
      const results = await session.run(feeds, fetches);
      const out: NamedTensors = {};
      for (const name of fetches) out[name] = fromOrtTensor(results[name]!);
      return out;
    },
    close: () => session.release(),
  };
}
