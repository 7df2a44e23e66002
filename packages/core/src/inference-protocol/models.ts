import type { TransportCodec } from '../runtime/runtime.js';
import type { InferenceApi, Service } from '../service/service.js';
import type { InferRequest } from '../wire/v2/infer-request.js';
import type { Tensor, TensorMetadata } from '../wire/v2/tensor.js';

/**
 * An API seen as a protocol model: tensors ↔ the values its descriptors read and write. Only the
 * conversion lives here; the API itself is called by the route, as every transport calls it.
 */
export interface ModelAdapter {
  /** The protocol's model name (`InferenceApi.protocolName`): what clients list, address and get back. */
  readonly name: string;
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
    name: api.protocolName,
    api,
    inputs,
    outputs,
    codec: {
      decode: (infer, ctx) => api.input.fromTensors(infer.inputs, ctx),
      encode: (value, ctx) => api.output.toTensors(value as never, ctx, OUTPUT),
    },
  };
}

/** Every API of the service that has a tensor form, by protocol model name: the models of both transports. */
export function protocolModels(service: Service): Map<string, ModelAdapter> {
  const models = new Map<string, ModelAdapter>();
  for (const api of service.apis.values()) {
    const model = modelAdapterFor(api);
    if (model) models.set(model.name, model);
  }
  return models;
}

/** `GET /v2/models`: the served models, each with its metadata path, so a client need not guess names. */
export function modelList(models: ReadonlyMap<string, ModelAdapter>) {
  return {
    models: [...models.values()].map((m) => ({
      name: m.name,
      api: m.api.name,
      route: m.api.route,
      metadata: `/v2/models/${encodeURIComponent(m.name)}`,
    })),
  };
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
    name: model.name,
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
