import type { InitializerDef, NodeDef, TensorData } from '@tiffin/onnx';

/** The parts of a built graph a weight pass rewrites. */
export interface WeightGraph {
  nodes: readonly NodeDef[];
  initializers: readonly InitializerDef[];
}

/** Access to initializer bytes while a pass runs (one tensor in memory at a time). */
export interface GraphTensors {
  /** An initializer's bytes (inline, or read from the graph's external data file). */
  bytes(init: InitializerDef): Uint8Array;
  /** Stores new bytes: inline when small, else appended to the rewritten external data file. */
  store(bytes: Uint8Array): TensorData;
}

/**
 * A rewrite of a built ONNX graph at the weight level (storage type, quantization), independent of what built the
 * graph: it sees nodes and initializers only. Initializers it returns unchanged are carried over as they are.
 */
export type WeightPass = (graph: WeightGraph, tensors: GraphTensors) => WeightGraph;

/** Every node consuming each value, with the input position. */
export function consumers(nodes: readonly NodeDef[]): Map<string, { node: NodeDef; input: number }[]> {
  const uses = new Map<string, { node: NodeDef; input: number }[]>();
  for (const node of nodes)
    node.inputs.forEach((name, input) => {
      if (!name) return;
      const list = uses.get(name) ?? [];
      list.push({ node, input });
      uses.set(name, list);
    });
  return uses;
}

export const asBytes = (a: ArrayBufferView): Uint8Array =>
  new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** float32 view of little-endian bytes (copied when unaligned). */
export function float32Of(bytes: Uint8Array): Float32Array {
  if (bytes.byteOffset % 4 === 0)
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  return new Float32Array(bytes.slice().buffer);
}
