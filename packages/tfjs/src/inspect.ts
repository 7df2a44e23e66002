import {
  applySignatureOverrides,
  type DType,
  InvalidArgument,
  type ModelSignature,
  type NamedTensors,
  NDArray,
  type SignatureOverrides,
  signatureFromTensors,
  type TensorSpec,
} from '@tiffin/core/internal';
import { selectTfjsBackend } from './backend.js';
import { readModelFolder, type TfjsModelFiles } from './model-folder.js';
import { type DeclaredTensor, openTfjsModel, type TfjsModel } from './tfjs-model.js';

export interface TfjsInspection {
  files: TfjsModelFiles;
  signature: ModelSignature;
}

/** Dynamic non-batch dimensions (image height, sequence length) take this size in a trial run. */
const TRIAL_SIDE = 32;

function zeros(spec: { dtype: DType; shape: readonly number[] }, batch: number): NDArray {
  const shape = spec.shape.map((d, i) => (d >= 0 ? d : i === 0 ? batch : TRIAL_SIDE));
  const size = shape.reduce((a, b) => a * b, 1);
  if (spec.dtype === 'str') return new NDArray(new Array<string>(size).fill(''), shape, 'str');
  return NDArray.zeros(shape, spec.dtype);
}

/**
 * Output shapes and dtypes a GraphModel does not declare, from two trial runs on zeros (batch 1, then 2):
 * a dimension that follows the batch is dynamic (-1), the others are what the model returned.
 */
async function trialOutputs(model: TfjsModel, inputs: readonly TensorSpec[]): Promise<TensorSpec[]> {
  const feed = (batch: number): NamedTensors =>
    Object.fromEntries(inputs.map((t) => [t.name, zeros(t, batch)]));
  const one = await model.run(feed(1));
  const two = inputs.every((t) => t.shape[0] === -1) ? await model.run(feed(2)) : one;
  return model.outputs.map((declared) => {
    const a = one[declared.name]!;
    const b = two[declared.name]!;
    const shape = a.shape.map((d, i) => (b.shape[i] !== d ? -1 : d));
    return { name: declared.name, dtype: a.dtype, shape: declared.shape ?? shape };
  });
}

function known(
  t: DeclaredTensor,
  side: string,
  overrides: SignatureOverrides | undefined,
): TensorSpec | null {
  const o = (side === 'input' ? overrides?.inputs : overrides?.outputs)?.[t.name];
  const dtype = o?.dtype ?? t.dtype;
  const shape = o?.shape ? [...o.shape] : t.shape;
  return dtype && shape ? { name: t.name, dtype, shape } : null;
}

/**
 * The signature of an opened model: what model.json declares (input and output names, dtypes, shapes, -1 where
 * the batch or another dimension may vary), outputs it leaves open filled in by trial runs, then the user's
 * overrides. Batchable when every tensor's dimension 0 is dynamic.
 */
export async function signatureOf(
  model: TfjsModel,
  overrides: SignatureOverrides | undefined,
): Promise<ModelSignature> {
  const inputs = model.inputs.map((t) => {
    const spec = known(t, 'input', overrides);
    if (!spec)
      throw new InvalidArgument(
        `The model does not declare the ${t.dtype ? 'shape' : 'dtype'} of input '${t.name}': give it in signatures.inputs`,
      );
    return spec;
  });
  let outputs = model.outputs.map((t) => known(t, 'output', overrides));
  // A GraphModel's ops are only resolved when it runs: one trial run refuses an unsupported graph at save
  // time, and fills in the output shapes model.json leaves open.
  if (model.kind === 'graph' || outputs.some((o) => o === null)) {
    let tried: TensorSpec[];
    try {
      tried = await trialOutputs(model, inputs);
    } catch (err) {
      const message = (err as Error).message.split('\n')[0];
      if (/Unknown op/i.test(message ?? ''))
        throw new InvalidArgument(`The model uses an operation TensorFlow.js cannot run: ${message}`, {
          code: 'TFJS_MODEL_INVALID',
        });
      if (outputs.every((o) => o !== null))
        return applySignatureOverrides(signatureFromTensors(inputs, outputs as TensorSpec[]), overrides);
      throw new InvalidArgument(
        `Could not infer the outputs' shapes by a trial run (${message}): give them in signatures.outputs`,
      );
    }
    outputs = outputs.map((o, i) => o ?? tried[i]!);
  }
  return applySignatureOverrides(signatureFromTensors(inputs, outputs as TensorSpec[]), overrides);
}

/**
 * Open a TensorFlow.js model folder once in this thread to read its signature. A folder tfjs cannot load
 * (corrupt JSON, missing or truncated weights, unknown ops or layers) is refused here, before anything is written.
 */
export async function inspectTfjs(
  path: string,
  overrides: SignatureOverrides | undefined,
): Promise<TfjsInspection> {
  const files = await readModelFolder(path);
  await selectTfjsBackend();
  let model: TfjsModel;
  try {
    model = await openTfjsModel(files);
  } catch (err) {
    throw new InvalidArgument(
      `${path} is not a TensorFlow.js model tfjs can load: ${(err as Error).message.split('\n')[0]}`,
      { code: 'TFJS_MODEL_INVALID' },
    );
  }
  try {
    return { files, signature: await signatureOf(model, overrides) };
  } finally {
    await model.close();
  }
}
