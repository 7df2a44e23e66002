import type { TransportCodec } from '../runtime/runtime.js';
import type { InferenceApi, Service } from '../service/service.js';
import type { Tensor, TensorMetadata } from '../wire/v2/tensor.js';
import type { InferRequest } from './infer-body.js';

/**
 * An API seen as a protocol model: tensors ↔ the values its descriptors read and write. Only the
 * conversion lives here; the API itself is called by the route, as every transport calls it.
 */
export interface ModelAdapter {
  readonly api: InferenceApi;
  readonly inputs: TensorMetadata[];
  readonly outputs: TensorMetadata[];
  /**
   * How both v2 transports (HTTP and gRPC) call the API through the runtime: the request's tensors → the
   * input value (malformed → 400), the result → output tensors; each descriptor converts its own.
   */
  readonly codec: TransportCodec<InferRequest, Tensor[]>;
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
    codec: {
      decode: (infer, ctx) => api.input.fromTensors(infer.inputs, ctx),
      encode: (value, ctx) => api.output.toTensors(value as never, ctx, OUTPUT),
    },
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
