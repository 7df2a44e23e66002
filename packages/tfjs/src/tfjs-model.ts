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

/**
 * The names a converted model's `signature` gives its tensors, by graph node: `output_mesh` for node
 * `Identity_2` (`"output_mesh": {"name": "Identity_2:0"}`). Keys that only repeat the node's name are left out,
 * and so is the whole side when the names would not be unique.
 */
export function signatureNames(signature: unknown, side: 'inputs' | 'outputs'): Map<string, string> {
  const names = new Map<string, string>();
  const entries = (signature as Record<string, unknown> | undefined)?.[side];
  if (typeof entries !== 'object' || entries === null) return names;
  for (const [key, value] of Object.entries(entries)) {
    const tensor = (value as { name?: unknown } | null)?.name;
    if (typeof tensor !== 'string') continue;
    const node = tensor.replace(/:0$/, '');
    if (key !== tensor && key !== node) names.set(node, key);
  }
  return new Set(names.values()).size === names.size ? names : new Map();
}

function graphModel(model: tf.GraphModel, signature: unknown): TfjsModel {
  const inputNames = signatureNames(signature, 'inputs');
  const outputNames = signatureNames(signature, 'outputs');
  type GraphTensor = (typeof model.inputs)[number];
  const declared = (t: GraphTensor, names: Map<string, string>): DeclaredTensor => ({
    name: names.get(t.name) ?? t.name,
    dtype: dtypeOfTf(t.dtype),
    shape: dims(t.shape),
  });
  const inputs = model.inputs.map((t) => declared(t, inputNames));
  const outputs = model.outputs.map((t) => declared(t, outputNames));
  // Served under the signature's names; the graph runs on its node names.
  const inputNodes = new Map(model.inputs.map((t, i) => [inputs[i]!.name, t.name]));
  const outputNodes = model.outputs.map((t) => t.name);
  // Graphs with control flow or dynamic ops (while loops, NonMaxSuppression) need executeAsync; the others run
  // faster through execute. tfjs says which when execute refuses.
  let dynamic = false;
  const compute = (named: tf.NamedTensorMap) => {
    const feeds: tf.NamedTensorMap = {};
    for (const [name, tensor] of Object.entries(named)) feeds[inputNodes.get(name) ?? name] = tensor;
    if (!dynamic) {
      try {
        return model.execute(feeds, outputNodes);
      } catch (err) {
        if (!/executeAsync/.test((err as Error).message)) throw err;
        dynamic = true;
      }
    }
    return model.executeAsync(feeds, outputNodes);
  };
  return {
    kind: 'graph',
    inputs,
    outputs,
    run: (named) =>
      runNamed(
        outputs.map((t) => t.name),
        named,
        inputs.map((t) => t.name),
        compute,
      ),
    close: async () => model.dispose(),
  };
}

/** Load a read model folder into tfjs on the current backend. */
export async function openTfjsModel(files: TfjsModelFiles): Promise<TfjsModel> {
  const handler = tf.io.fromMemory(files.artifacts);
  return files.kind === 'layers'
    ? layersModel(await tf.loadLayersModel(handler), files.artifacts.modelTopology)
    : graphModel(await tf.loadGraphModel(handler), files.artifacts.signature);
}
