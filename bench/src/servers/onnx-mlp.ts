/**
 * The batching bench's onnxruntime workload: an ONNX model of dense layers (MatMul + Relu), built in memory
 * with @tiffin/onnx's graph writer, run on onnxruntime-node with one intra-op thread so the server stays on
 * its own core.
 */

import { NDArray } from '@tiffin/core';
import { DataType, encodeModel, type InitializerDef, type NodeDef } from '@tiffin/onnx';
import * as ort from 'onnxruntime-node';

export const ONNX_WIDTH = 1024;
export const ONNX_LAYERS = 8;

/** The model's bytes: ONNX_LAYERS layers `x·W` (ReLU between them), deterministic weights of scale ~1/√width. */
export function denseModel(width: number, layers: number): Uint8Array {
  return mlpModel(width, width, layers, width);
}

/**
 * `layers` MatMul layers `inWidth → hidden → … → outWidth` with ReLU between them. A narrow input and output
 * around wide hidden layers: little JSON per row, much model per call.
 */
export function mlpModel(inWidth: number, hidden: number, layers: number, outWidth: number): Uint8Array {
  const nodes: NodeDef[] = [];
  const initializers: InitializerDef[] = [];
  let x = 'input';
  for (let i = 0; i < layers; i++) {
    const rows = i === 0 ? inWidth : hidden;
    const cols = i === layers - 1 ? outWidth : hidden;
    const w = new Float32Array(rows * cols);
    for (let k = 0; k < w.length; k++) w[k] = ((((k * 37 + i * 11) % 101) / 101 - 0.5) * 2) / Math.sqrt(rows);
    initializers.push({
      name: `w${i}`,
      dataType: DataType.FLOAT,
      dims: [rows, cols],
      data: { kind: 'raw', bytes: new Uint8Array(w.buffer) },
    });
    const last = i === layers - 1;
    const y = last ? 'output' : `h${i}`;
    nodes.push({ opType: 'MatMul', inputs: [x, `w${i}`], outputs: [last ? y : `m${i}`] });
    if (!last) nodes.push({ opType: 'Relu', inputs: [`m${i}`], outputs: [y] });
    x = y;
  }
  return encodeModel({
    opsets: { '': 17 },
    graph: {
      name: 'dense_stack',
      nodes,
      initializers,
      inputs: [{ name: 'input', elemType: DataType.FLOAT, shape: ['batch', inWidth] }],
      outputs: [{ name: 'output', elemType: DataType.FLOAT, shape: ['batch', outWidth] }],
    },
  });
}

/** An API function over the model: `[rows, ONNX_WIDTH]` float32 in, the same shape out. */
export async function onnxMlp(): Promise<(x: NDArray) => Promise<NDArray>> {
  const session = await ort.InferenceSession.create(denseModel(ONNX_WIDTH, ONNX_LAYERS), {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  return async (x) => {
    const rows = x.shape[0]!;
    const input = new ort.Tensor('float32', x.data as Float32Array, [rows, ONNX_WIDTH]);
    const { output } = await session.run({ input });
    return new NDArray(output!.data as Float32Array, [rows, ONNX_WIDTH], 'float32');
  };
}
