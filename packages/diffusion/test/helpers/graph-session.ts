import type { loadOrt } from '@tiffin/onnx';
import type { InferenceSession } from 'onnxruntime-node';
import { ensureGraph } from '../../src/engines/onnx/graph-cache.js';
import { sessionOptions } from '../../src/engines/onnx/session.js';
import { SafetensorsWeightSource } from '../../src/engines/onnx/weight-source.js';

/**
 * Builds one component's graph (no LoRA branches) from its safetensors files into `graphsDir` and opens it on
 * onnxruntime's CPU provider with one thread, as the network-level tests run a definition without the pipeline.
 */
export async function openComponentGraph(
  ort: Awaited<ReturnType<typeof loadOrt>>,
  graphsDir: string,
  component: string,
  files: readonly string[],
  build: Parameters<typeof ensureGraph>[1]['build'],
): Promise<InferenceSession> {
  const source = new SafetensorsWeightSource(component, [...files]);
  try {
    const g = ensureGraph(graphsDir, { name: component, key: {}, source, loraTarget: () => false, build });
    return await ort.InferenceSession.create(
      g.modelPath,
      sessionOptions({ providers: ['cpu'], threads: 1, skipped: [] }),
    );
  } finally {
    source.close();
  }
}
