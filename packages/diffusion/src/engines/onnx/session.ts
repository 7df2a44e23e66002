import type { ResolvedRuntime } from '@tiffin/onnx';
import type { InferenceSession } from 'onnxruntime-node';

// Provider and thread resolution live in @tiffin/onnx (one place for every ONNX Runtime user).
export {
  GPU_INSTALL_COMMAND,
  loadOrt,
  type OnnxRuntimeOptions,
  ORT_PROVIDER_NAMES,
  type OrtModule,
  parseOrtProviders,
  parseOrtThreads,
  type ResolvedRuntime,
  resolveRuntime,
} from '@tiffin/onnx';

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
