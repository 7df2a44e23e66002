import * as tf from '@tensorflow/tfjs';
import { BadInput, type DType, type ModelRunner, type NamedTensors } from '@tiffin/core/internal';
import { layersTensorNames } from './layers-names.js';
import type { TfjsModelFiles } from './model-folder.js';
import { dtypeOfTf, fromTfTensor, toTfTensor } from './tensors.js';

/** What the model file says of one tensor: shape and dtype may be unknown (a GraphModel's outputs often are). */
export interface DeclaredTensor {
  name: string;
  dtype: DType | null;
  /** -1 for a dimension of any size; null when even the rank is unknown. */
  shape: number[] | null;
}

/** A loaded tfjs model behind one interface: named tensors in, named tensors out. */
export interface TfjsModel extends ModelRunner {
  readonly kind: 'layers' | 'graph';
  readonly inputs: readonly DeclaredTensor[];
  readonly outputs: readonly DeclaredTensor[];
}

const dims = (shape: readonly (number | null)[] | undefined): number[] | null =>
  shape ? shape.map((d) => (d === null || d === undefined || d < 0 ? -1 : d)) : null;

/** Runs `compute` and moves its outputs into NDArrays, freeing every tensor made on the way. */
async function runNamed(
  names: readonly string[],
  inputs: NamedTensors,
  inputNames: readonly string[],
  compute: (feeds: tf.NamedTensorMap) => tf.Tensor | tf.Tensor[] | Promise<tf.Tensor | tf.Tensor[]>,
): Promise<NamedTensors> {
  const feeds: tf.NamedTensorMap = {};
  const results: tf.Tensor[] = [];
  try {
    for (const name of inputNames) {
      const array = inputs[name];
      if (!array) throw new BadInput(`Missing input tensor '${name}'`);
      feeds[name] = toTfTensor(array);
    }
    const out = await compute(feeds);
    results.push(...(Array.isArray(out) ? out : [out]));
    const named: NamedTensors = {};
    for (let i = 0; i < names.length; i++) named[names[i]!] = await fromTfTensor(results[i]!);
    return named;
  } finally {
    tf.dispose(Object.values(feeds));
    tf.dispose(results);
  }
}

function layersModel(model: tf.LayersModel, topology: unknown): TfjsModel {
  const names = layersTensorNames(topology);
  const inputNames = model.inputs.map((_, i) => names?.inputs[i] ?? `input_${i}`);
  const outputNames = model.outputs.map((_, i) => names?.outputs[i] ?? `output_${i}`);
  return {
    kind: 'layers',
    inputs: model.inputs.map((t, i) => ({
      name: inputNames[i]!,
      dtype: dtypeOfTf(t.dtype),
      shape: dims(t.shape),
    })),
    outputs: model.outputs.map((t, i) => ({
      name: outputNames[i]!,
      dtype: dtypeOfTf(t.dtype),
      shape: dims(t.shape),
    })),
    run: (inputs) =>
      runNamed(outputNames, inputs, inputNames, (feeds) => model.predict(inputNames.map((n) => feeds[n]!))),
    close: async () => {
      model.dispose();
    },
  };
}

function graphModel(model: tf.GraphModel): TfjsModel {
  const inputs = model.inputs.map((t) => ({ name: t.name, dtype: dtypeOfTf(t.dtype), shape: dims(t.shape) }));
  const outputs = model.outputs.map((t) => ({
    name: t.name,
    dtype: dtypeOfTf(t.dtype),
    shape: dims(t.shape),
  }));
  const inputNames = inputs.map((t) => t.name);
  const outputNames = outputs.map((t) => t.name);
  // Graphs with control flow or dynamic ops (while loops, NonMaxSuppression) need executeAsync; the others run
  // faster through execute. tfjs says which when execute refuses.
  let dynamic = false;
  const compute = (feeds: tf.NamedTensorMap) => {
    if (!dynamic) {
      try {
        return model.execute(feeds, outputNames);
      } catch (err) {
        if (!/executeAsync/.test((err as Error).message)) throw err;
        dynamic = true;
      }
    }
    return model.executeAsync(feeds, outputNames);
  };
  return {
    kind: 'graph',
    inputs,
    outputs,
    run: (named) => runNamed(outputNames, named, inputNames, compute),
    close: async () => model.dispose(),
  };
}

/** Load a read model folder into tfjs on the current backend. */
export async function openTfjsModel(files: TfjsModelFiles): Promise<TfjsModel> {
  const handler = tf.io.fromMemory(files.artifacts);
  return files.kind === 'layers'
    ? layersModel(await tf.loadLayersModel(handler), files.artifacts.modelTopology)
    : graphModel(await tf.loadGraphModel(handler));
}
