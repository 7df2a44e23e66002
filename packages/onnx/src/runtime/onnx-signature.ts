import {
  InvalidArgument,
  type ModelSignature,
  signatureFromTensors,
  type TensorSpec,
} from '@tiffin/core/internal';
import type { InferenceSession } from 'onnxruntime-node';
import { dtypeOfOrtType } from './tensors.js';

/** What the graph says about its inputs and outputs, plus the outputs left out of the signature and why. */
export interface OnnxSignature {
  signature: ModelSignature;
  /** Outputs that are not tensors (skl2onnx's ZipMap, sequences) or have a type NDArray cannot hold. */
  skippedOutputs: string[];
}

function spec(meta: InferenceSession.ValueMetadata, side: string): TensorSpec | string {
  if (!meta.isTensor) return `${side} '${meta.name}' is not a tensor (a sequence or map)`;
  const dtype = dtypeOfOrtType(meta.type);
  if (!dtype)
    return `${side} '${meta.name}' has element type ${meta.type}, which Tiffin's NDArray cannot hold`;
  const shape: number[] = [];
  const dimNames: (string | null)[] = [];
  for (const d of meta.shape as readonly (number | string)[]) {
    // A symbolic dimension (`batch`) or one the graph leaves unknown takes any size.
    if (typeof d === 'string' || !Number.isInteger(d) || d < 0) {
      shape.push(-1);
      dimNames.push(typeof d === 'string' && d !== '' ? d : null);
    } else {
      shape.push(d);
      dimNames.push(null);
    }
  }
  return { name: meta.name, dtype, shape, dimNames };
}

/**
 * The signature ONNX Runtime reads from the graph: names, element types, shapes with their symbolic
 * dimensions; batchable when every kept tensor's dimension 0 is dynamic. An input Tiffin cannot feed is an
 * error; an output it cannot return is left out (and not fetched).
 */
export function readOnnxSignature(session: InferenceSession): OnnxSignature {
  const inputs: TensorSpec[] = [];
  for (const meta of session.inputMetadata) {
    const s = spec(meta, 'input');
    if (typeof s === 'string')
      throw new InvalidArgument(`Unsupported ONNX model: ${s}`, { code: 'ONNX_UNSUPPORTED' });
    inputs.push(s);
  }
  const outputs: TensorSpec[] = [];
  const skippedOutputs: string[] = [];
  for (const meta of session.outputMetadata) {
    const s = spec(meta, 'output');
    if (typeof s === 'string') skippedOutputs.push(s);
    else outputs.push(s);
  }
  if (outputs.length === 0)
    throw new InvalidArgument(
      `Unsupported ONNX model: no output is a tensor (${skippedOutputs.join('; ')})`,
      {
        code: 'ONNX_UNSUPPORTED',
      },
    );
  return { signature: signatureFromTensors(inputs, outputs), skippedOutputs };
}
