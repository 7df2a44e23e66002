import { BadInput } from '../errors/index.js';
import { BufferedHttpRequest } from '../http/request.js';
import type { HttpResponse } from '../http/response.js';
import type { IODescriptor } from '../io/descriptor.js';
import { NumpyNdarray } from '../io/descriptors/numpy-ndarray.js';
import { Tensors } from '../io/descriptors/tensors.js';
import type { NamedTensors } from '../models/runner.js';
import { NDArray } from '../ndarray/ndarray.js';
import type { Context } from '../service/context.js';
import type { InferenceApi, Service } from '../service/service.js';
import { type Datatype, datatypeOf } from './datatype.js';
import { columnsFromTable, tableFromColumns } from './table.js';
import type { Tensor } from './tensor.js';

/** A tensor as model metadata lists it (`$metadata_tensor`); -1 is a dimension of any size. */
export interface TensorMetadata {
  name: string;
  datatype: Datatype;
  shape: number[];
}

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

const INPUT = 'input';
const OUTPUT = 'output';
const DATAFRAME = 'tiffin.io.PandasDataFrame';
const TEXT = 'tiffin.io.Text';
const JSON_ID = 'tiffin.io.JSON';

type Kind = 'ndarray' | 'table' | 'bytes' | 'tensors';

/** Which descriptors a model can have: NumpyNdarray (one tensor), PandasDataFrame (a tensor per column), Text/JSON (BYTES). */
function kindOf(descriptor: IODescriptor): Kind | null {
  if (descriptor instanceof NumpyNdarray) return 'ndarray';
  if (descriptor instanceof Tensors) return 'tensors';
  const id = descriptor.descriptorId;
  if (id === DATAFRAME) {
    const format = descriptor.toSpec()?.args?.default_format;
    return format === undefined || format === 'json' ? 'table' : null;
  }
  return id === TEXT || id === JSON_ID ? 'bytes' : null;
}

function specArgs(descriptor: IODescriptor): Record<string, unknown> {
  return descriptor.toSpec()?.args ?? {};
}

/** Column tensors a DataFrame descriptor declares (`columns`, typed by its `dtype` map when it has one). */
function tableMetadata(descriptor: IODescriptor): TensorMetadata[] {
  const args = specArgs(descriptor);
  const columns = Array.isArray(args.columns) ? (args.columns as string[]) : [];
  const dtypes =
    typeof args.dtype === 'object' && args.dtype !== null ? (args.dtype as Record<string, string>) : {};
  return columns.map((name) => {
    const dtype = dtypes[name];
    let datatype: Datatype = 'BYTES';
    try {
      if (dtype) datatype = datatypeOf(NDArray.zeros([0], dtype as never).dtype);
    } catch {
      // A pandas-only dtype name (category, datetime): described as BYTES.
    }
    return { name, datatype, shape: [-1] };
  });
}

/** The model's own name for a one-tensor side (a zero-code model service), else the protocol's default. */
function tensorName(descriptor: IODescriptor, fallback: string): string {
  const named = (descriptor as { tensorName?: unknown }).tensorName;
  return typeof named === 'string' ? named : fallback;
}

function metadataFor(descriptor: IODescriptor, kind: Kind, name: string): TensorMetadata[] {
  if (kind === 'tensors')
    return (descriptor as Tensors).tensors.map((t) => ({
      name: t.name,
      datatype: datatypeOf(t.dtype),
      shape: [...t.shape],
    }));
  if (kind === 'table') return tableMetadata(descriptor);
  if (kind === 'bytes') return [{ name, datatype: 'BYTES', shape: [1] }];
  const nd = descriptor as NumpyNdarray;
  return [
    { name, datatype: nd.dtype ? datatypeOf(nd.dtype) : 'FP64', shape: nd.shape ? [...nd.shape] : [-1] },
  ];
}

function only(tensors: Tensor[], model: string): Tensor {
  if (tensors.length !== 1) {
    throw new BadInput(`Model '${model}' takes one input tensor, got ${tensors.length}`);
  }
  return tensors[0]!;
}

/** A request for the input descriptor to read, as if the body had come over HTTP. */
function bodyRequest(ctx: Context, body: string, contentType: string): BufferedHttpRequest {
  return new BufferedHttpRequest({
    method: 'POST',
    url: ctx.request.url,
    headers: { 'content-type': contentType },
    body: Buffer.from(body, 'utf8'),
    limits: ctx.request.limits,
  });
}

async function responseText(response: HttpResponse): Promise<string> {
  const { body } = response;
  if (body === null) return '';
  if (body instanceof Uint8Array)
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

function bytesTensor(name: string, text: string): Tensor {
  return { name, array: new NDArray([text], [1], 'str') };
}

/** The protocol model of an API, or null when its descriptors have no tensor form (File, Image, Multipart). */
export function modelAdapterFor(api: InferenceApi): ModelAdapter | null {
  const inKind = kindOf(api.input);
  const outKind = kindOf(api.output);
  if (!inKind || !outKind) return null;
  const model = api.name;
  return {
    api,
    inputs: metadataFor(api.input, inKind, tensorName(api.input, INPUT)),
    outputs: metadataFor(api.output, outKind, tensorName(api.output, OUTPUT)),

    async toInput(tensors, ctx) {
      if (inKind === 'tensors') return (api.input as Tensors).fromTensors(tensors);
      if (inKind === 'ndarray') return (api.input as NumpyNdarray).validate(only(tensors, model).array);
      if (inKind === 'table') {
        const body = tableFromColumns(tensors, String(specArgs(api.input).orient ?? 'records'));
        return api.input.fromHttpRequest(bodyRequest(ctx, body, 'application/json'));
      }
      const tensor = only(tensors, model);
      if (tensor.array.dtype !== 'str' || tensor.array.size !== 1) {
        throw new BadInput(`Model '${model}' takes one BYTES element (text or JSON)`);
      }
      const text = (tensor.array.data as string[])[0]!;
      const type = api.input.descriptorId === JSON_ID ? 'application/json' : 'text/plain; charset=utf-8';
      return api.input.fromHttpRequest(bodyRequest(ctx, text, type));
    },

    async fromOutput(value, ctx) {
      if (outKind === 'tensors')
        return Object.entries(value as NamedTensors).map(([name, array]) => ({ name, array }));
      if (outKind === 'ndarray') {
        const nd = api.output as NumpyNdarray;
        const array = value instanceof NDArray ? value : NDArray.from(value);
        return [{ name: tensorName(nd, OUTPUT), array: nd.validate(array) }];
      }
      const text = await responseText(await api.output.toHttpResponse(value as never, ctx));
      if (outKind === 'bytes') return [bytesTensor(OUTPUT, text)];
      return columnsFromTable(JSON.parse(text), String(specArgs(api.output).orient ?? 'records'));
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
