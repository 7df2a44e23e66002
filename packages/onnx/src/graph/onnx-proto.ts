import { ProtoWriter } from './protobuf.js';

/**
 * The ONNX ModelProto subset Tiffin writes (field numbers from the public onnx.proto):
 * a graph of nodes with attributes, initializers inline or in an external data file, and typed
 * inputs/outputs with symbolic dimensions.
 */

/** TensorProto.DataType values used here. */
export const DataType = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  INT32: 6,
  INT64: 7,
  BOOL: 9,
  FLOAT16: 10,
  DOUBLE: 11,
} as const;
export type DataTypeCode = (typeof DataType)[keyof typeof DataType];

export type AttributeValue =
  | { kind: 'int'; value: number }
  | { kind: 'float'; value: number }
  | { kind: 'ints'; value: readonly number[] }
  | { kind: 'string'; value: string };

export interface NodeDef {
  opType: string;
  inputs: readonly string[];
  outputs: readonly string[];
  name?: string;
  domain?: string;
  attributes?: Readonly<Record<string, AttributeValue>>;
}

/** Where an initializer's bytes live: inline (small constants) or a range of the external file. */
export type TensorData =
  | { kind: 'raw'; bytes: Uint8Array }
  | { kind: 'external'; location: string; offset: number; length: number };

export interface InitializerDef {
  name: string;
  dataType: DataTypeCode;
  dims: readonly number[];
  data: TensorData;
}

/** A dimension: fixed size or a symbolic name (`batch`, `height`). */
export type Dim = number | string;

export interface ValueInfoDef {
  name: string;
  elemType: DataTypeCode;
  shape: readonly Dim[];
}

export interface GraphDef {
  name: string;
  nodes: readonly NodeDef[];
  initializers: readonly InitializerDef[];
  inputs: readonly ValueInfoDef[];
  outputs: readonly ValueInfoDef[];
}

export interface ModelDef {
  graph: GraphDef;
  /** domain ('' = ai.onnx) → opset version. */
  opsets: Readonly<Record<string, number>>;
  producerVersion?: string;
}

// AttributeProto.AttributeType
const ATTR_FLOAT = 1;
const ATTR_INT = 2;
const ATTR_STRING = 3;
const ATTR_INTS = 7;

function attribute(name: string, a: AttributeValue): ProtoWriter {
  const w = new ProtoWriter().string(1, name);
  switch (a.kind) {
    case 'float':
      return w.float(2, a.value).int(20, ATTR_FLOAT);
    case 'int':
      return w.int(3, a.value).int(20, ATTR_INT);
    case 'string':
      return w.string(4, a.value).int(20, ATTR_STRING);
    case 'ints':
      return w.packedInts(8, a.value).int(20, ATTR_INTS);
  }
}

function node(n: NodeDef): ProtoWriter {
  const w = new ProtoWriter();
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  if (n.name) w.string(3, n.name);
  w.string(4, n.opType);
  for (const [k, v] of Object.entries(n.attributes ?? {})) w.message(5, attribute(k, v));
  if (n.domain) w.string(7, n.domain);
  return w;
}

function stringEntry(key: string, value: string): ProtoWriter {
  return new ProtoWriter().string(1, key).string(2, value);
}

function tensor(t: InitializerDef): ProtoWriter {
  const w = new ProtoWriter().packedInts(1, t.dims).int(2, t.dataType).string(8, t.name);
  if (t.data.kind === 'raw') return w.bytes(9, t.data.bytes);
  w.message(13, stringEntry('location', t.data.location));
  w.message(13, stringEntry('offset', String(t.data.offset)));
  w.message(13, stringEntry('length', String(t.data.length)));
  return w.int(14, 1); // data_location = EXTERNAL
}

function valueInfo(v: ValueInfoDef): ProtoWriter {
  const shape = new ProtoWriter();
  for (const d of v.shape)
    shape.message(1, typeof d === 'number' ? new ProtoWriter().int(1, d) : new ProtoWriter().string(2, d));
  const tensorType = new ProtoWriter().int(1, v.elemType).message(2, shape);
  return new ProtoWriter().string(1, v.name).message(2, new ProtoWriter().message(1, tensorType));
}

/** Serialises a model; IR version 8 (opset 17 era, read by every ORT since 1.14). */
export function encodeModel(m: ModelDef): Uint8Array {
  const g = new ProtoWriter();
  for (const n of m.graph.nodes) g.message(1, node(n));
  g.string(2, m.graph.name);
  for (const t of m.graph.initializers) g.message(5, tensor(t));
  for (const i of m.graph.inputs) g.message(11, valueInfo(i));
  for (const o of m.graph.outputs) g.message(12, valueInfo(o));
  const w = new ProtoWriter().int(1, 8).string(2, 'tiffin');
  if (m.producerVersion) w.string(3, m.producerVersion);
  w.message(7, g);
  for (const [domain, version] of Object.entries(m.opsets)) {
    const op = new ProtoWriter();
    if (domain) op.string(1, domain);
    op.int(2, version);
    w.message(8, op);
  }
  return w.finish();
}
