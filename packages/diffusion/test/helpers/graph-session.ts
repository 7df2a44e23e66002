import { rmSync } from 'node:fs';
import { loadOrt } from '@tiffin/onnx';
import type { InferenceSession } from 'onnxruntime-node';
import { afterAll, beforeAll } from 'vitest';
import { selectBackend } from '../../src/backend.js';
import { ensureGraph } from '../../src/engines/onnx/graph-cache.js';
import { sessionOptions } from '../../src/engines/onnx/session.js';
import { SafetensorsWeightSource } from '../../src/engines/onnx/weight-source.js';

type Ort = Awaited<ReturnType<typeof loadOrt>>;
export type GraphBuild = Parameters<typeof ensureGraph>[1]['build'];

/**
 * Builds one component's graph (no LoRA branches) from its safetensors files into `graphsDir` and opens it on
 * onnxruntime's CPU provider with one thread, as the network-level tests run a definition without the pipeline.
 */
export async function openComponentGraph(
  ort: Ort,
  graphsDir: string,
  component: string,
  files: readonly string[],
  build: GraphBuild,
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

/**
 * A suite that runs networks on both engines: registers hooks that select TF.js on wasm and load onnxruntime before
 * it, and release its sessions and remove `dir` after it. `open` builds and opens a component's graph in `graphsDir`.
 */
export function networkSuite(
  dir: string,
  graphsDir: string,
): {
  ort: () => Ort;
  open: (component: string, files: readonly string[], build: GraphBuild) => Promise<InferenceSession>;
} {
  let ort: Ort | undefined;
  const sessions: InferenceSession[] = [];
  beforeAll(async () => {
    await selectBackend('wasm', () => {});
    ort = await loadOrt();
  }, 60_000);
  afterAll(() => {
    for (const s of sessions) void s.release();
    rmSync(dir, { recursive: true, force: true });
  });
  const loaded = () => {
    if (!ort) throw new Error('onnxruntime is loaded in beforeAll');
    return ort;
  };
  return {
    ort: loaded,
    open: async (component, files, build) => {
      const s = await openComponentGraph(loaded(), graphsDir, component, files, build);
      sessions.push(s);
      return s;
    },
  };
}
