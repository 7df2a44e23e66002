import { InvalidArgument } from '../errors/index.js';
import type { IODescriptor } from '../io/descriptor.js';
import { Tensors } from '../io/descriptors/tensors.js';
import type { NDArray } from '../ndarray/ndarray.js';
import { type ApiOptions, Service } from '../service/service.js';
import type { LoadedModel, NamedTensors } from './runner.js';
import { describeTensor } from './signature.js';
import { SignatureNdarray } from './signature-ndarray.js';

export interface ModelServiceOptions {
  /** Service name (default: the model's name, lower-cased, other characters as `-`). */
  name?: string;
  /** Batching of a batchable signature; `false` turns it off. Defaults: 32 rows, 100 ms. */
  batching?: false | { max_batch_size?: number; max_latency_ms?: number };
  /** Description for the API page (default: the signature). */
  doc?: string;
}

/** A name the service and API rules accept: `Iris v2` → service `iris-v2`, API (and protocol model) `iris_v2`. */
function serviceName(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '')
      .slice(0, 63) || 'model'
  );
}

function apiName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_]+/g, '_');
  return /^[A-Za-z_]/.test(cleaned) ? cleaned : `m_${cleaned}`;
}

/**
 * Zero code: a service that serves one model. `POST /predict` takes the model's input (one input: its nested
 * list, NumpyNdarray-style; several: a JSON object of named tensors) and answers with its output in the same
 * form; the Open Inference Protocol and gRPC serve it under the model's name. A batchable signature is served
 * with adaptive batching, one batch per idle runner instance.
 */
export function modelService(model: LoadedModel, options: ModelServiceOptions = {}): Service {
  const { signature } = model;
  if (signature.inputs.length === 0 || signature.outputs.length === 0)
    throw new InvalidArgument(`Model '${model.name}' has no inputs or no outputs to serve`);
  const single = signature.inputs.length === 1 && signature.outputs.length === 1;
  const modelName = apiName(model.name);
  const input: IODescriptor = single
    ? new SignatureNdarray(model.name, signature.inputs[0]!, true)
    : new Tensors({ model: model.name, tensors: signature.inputs });
  const output: IODescriptor = single
    ? new SignatureNdarray(model.name, signature.outputs[0]!, false)
    : new Tensors({ model: model.name, tensors: signature.outputs });
  const inName = signature.inputs[0]!.name;
  const outName = signature.outputs[0]!.name;
  const call = single
    ? async (x: NDArray) => (await model.run({ [inName]: x }))[outName]!
    : (x: NamedTensors) => model.run(x);
  const batching = signature.batchable && options.batching !== false ? (options.batching ?? {}) : null;
  const doc =
    options.doc ??
    `Model \`${model.tag ?? model.name}\` (${model.module}).\n\nInputs: ${signature.inputs.map(describeTensor).join('; ')}\n\nOutputs: ${signature.outputs.map(describeTensor).join('; ')}${batching ? `\n\nBatched along dimension ${signature.batch_dim}.` : ''}`;
  const svc = new Service(options.name ?? serviceName(model.name), {
    doc,
    models: model.tag ? [model.tag] : [],
  });
  const api: ApiOptions<IODescriptor, IODescriptor> = {
    name: modelName,
    route: '/predict',
    input,
    output,
    doc: `Run ${model.name}`,
  };
  if (batching) {
    Object.assign(api, {
      batchable: true,
      batch_dim: signature.batch_dim,
      max_batch_size: batching.max_batch_size,
      max_latency_ms: batching.max_latency_ms,
      max_concurrent_batches: model.instances,
    });
  }
  svc.api(api as ApiOptions<IODescriptor, IODescriptor> & { batchable?: false }, call as never);
  svc.onShutdown(() => model.close());
  return svc;
}
