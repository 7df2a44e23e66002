import { DataType, type InitializerDef, type NodeDef } from '@tiffin/onnx';
import { float32ToHalf } from '../../../weights/dtype.js';
import { asBytes, float32Of, type GraphTensors, type WeightGraph } from './weight-pass.js';

/** Smaller float32 initializers (scalars, shapes' companions) stay as they are. */
const MIN_VALUES = 1024;

/**
 * float16 storage for a float32 graph: every float32 initializer of 1024 values or more is stored as float16 and
 * widened by a `Cast` at the start of the graph, under its old name, so the graph still computes in float32. ORT's
 * constant folding turns each Cast into a float32 initializer when the session opens: half the bytes on disk, the
 * same memory and speed as float32 once open.
 */
export function f16StoragePass(graph: WeightGraph, tensors: GraphTensors): WeightGraph {
  const casts: NodeDef[] = [];
  const initializers: InitializerDef[] = [];
  for (const init of graph.initializers) {
    if (init.dataType !== DataType.FLOAT || init.dims.reduce((a, b) => a * b, 1) < MIN_VALUES) {
      initializers.push(init);
      continue;
    }
    const half = `${init.name}.f16`;
    initializers.push({
      name: half,
      dataType: DataType.FLOAT16,
      dims: init.dims,
      data: tensors.store(asBytes(float32ToHalf(float32Of(tensors.bytes(init))))),
    });
    casts.push({
      opType: 'Cast',
      inputs: [half],
      outputs: [init.name],
      attributes: { to: { kind: 'int', value: DataType.FLOAT } },
    });
  }
  return { nodes: [...casts, ...graph.nodes], initializers };
}
