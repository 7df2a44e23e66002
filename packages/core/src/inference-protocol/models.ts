import type { Context } from '../service/context.js';
import type { InferenceApi, Service } from '../service/service.js';
import type { Tensor, TensorMetadata } from './tensor.js';

/**
 * An API seen as a protocol model: tensors ↔ the values its descriptors read and write. Only the
 * conversion lives here; the API itself is called by the route, as every transport calls it.
 */
export interface ModelAdapter {
  readonly api: InferenceApi;
  readonly inputs: TensorMetadata[];
  readonly outputs: TensorMetadata[];
  /** The API's input value from the request's tensors (malformed → 400). */
  toInput(tensors: Tensor[], ctx: Context): Promise<unknown>;
  /** Output tensors from the API's result. */
  fromOutput(value: unknown, ctx: Context): Promise<Tensor[]>;
}

/** The protocol's default names of a one-tensor input and output. */
const INPUT = 'input';
const OUTPUT = 'output';

/**
 * The protocol model of an API, or null when a descriptor has no tensor form (File, Image, Multipart): each
 * descriptor reads and writes its own tensors (`IODescriptor.fromTensors`/`toTensors`).
 */
export function modelAdapterFor(api: InferenceApi): ModelAdapter | null {
  const inputs = api.input.tensorMetadata(INPUT);
  const outputs = api.output.tensorMetadata(OUTPUT);
  if (!inputs || !outputs) return null;
  return {
    api,
    inputs,
    outputs,
    toInput: (tensors, ctx) => api.input.fromTensors(tensors, ctx),
    fromOutput: (value, ctx) => api.output.toTensors(value as never, ctx, OUTPUT),
  };
}

/** Every API of the service that has a tensor form, by model (API) name: the models of both transports. */
export function protocolModels(service: Service): Map<string, ModelAdapter> {
  const models = new Map<string, ModelAdapter>();
  for (const api of service.apis.values()) {
    const model = modelAdapterFor(api);
    if (model) models.set(api.name, model);
  }
  return models;
}

/** Model metadata (`$metadata_model_response`): Tiffin's models have no versions. */
export interface ModelMetadata {
  name: string;
  versions: string[];
  platform: string;
  inputs: TensorMetadata[];
  outputs: TensorMetadata[];
}

export function modelMetadata(model: ModelAdapter): ModelMetadata {
  return {
    name: model.api.name,
    versions: [],
    platform: 'tiffin',
    inputs: model.inputs,
    outputs: model.outputs,
  };
}

/** Server metadata (`$metadata_server_response`) with the extensions one transport supports. */
export function serverMetadata(service: Service, extensions: readonly string[]) {
  return { name: service.name, version: service.version ?? '0.0.0', extensions: [...extensions] };
}
