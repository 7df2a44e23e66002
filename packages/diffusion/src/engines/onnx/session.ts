import type { ResolvedRuntime } from '@tiffin/onnx';
import type { InferenceSession } from 'onnxruntime-node';

/** Session options of the diffusion engine's components (providers and threads from `resolveRuntime`). */
export function sessionOptions(runtime: ResolvedRuntime): InferenceSession.SessionOptions {
  return {
    executionProviders: runtime.providers,
    intraOpNumThreads: runtime.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    // Errors only: ORT warns once per weight that is also a graph input, which is the LoRA design.
    logSeverityLevel: 3,
  };
}
