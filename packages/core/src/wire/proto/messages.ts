/**
 * The protobuf messages of the `bentoml.grpc.v1` wire protocol (docs/spec/io-descriptors.md §11) as plain objects, in the
 * shape @grpc/proto-loader produces with `{keepCase: true, longs: String, enums: String, bytes: Buffer,
 * defaults: false, oneofs: true}`: snake_case field names, int64/uint64 as decimal strings, enums by name,
 * and the oneof member name in the oneof's own key (`content`, `representation`).
 */

export type NDArrayDType =
  | 'DTYPE_UNSPECIFIED'
  | 'DTYPE_FLOAT'
  | 'DTYPE_DOUBLE'
  | 'DTYPE_BOOL'
  | 'DTYPE_INT32'
  | 'DTYPE_INT64'
  | 'DTYPE_UINT32'
  | 'DTYPE_UINT64'
  | 'DTYPE_STRING';

/** The NDArray message's value fields (one per element type). */
export const VALUE_FIELDS = [
  'float_values',
  'double_values',
  'bool_values',
  'int32_values',
  'int64_values',
  'uint32_values',
  'uint64_values',
  'string_values',
] as const;
export type NDArrayValueField = (typeof VALUE_FIELDS)[number];

export interface NDArrayMessage {
  dtype?: NDArrayDType | number;
  shape?: number[];
  string_values?: string[];
  float_values?: number[];
  double_values?: number[];
  bool_values?: boolean[];
  int32_values?: number[];
  int64_values?: Array<string | number>;
  uint32_values?: number[];
  uint64_values?: Array<string | number>;
}

export interface SeriesMessage {
  bool_values?: boolean[];
  float_values?: number[];
  int32_values?: number[];
  int64_values?: Array<string | number>;
  double_values?: number[];
  string_values?: string[];
}

export interface DataFrameMessage {
  column_names?: string[];
  columns?: SeriesMessage[];
}

export interface FileMessage {
  kind?: string;
  content?: Buffer | Uint8Array;
}

/**
 * google.protobuf.Value. protobufjs ships the well-known types pre-compiled with camelCase field names,
 * which `keepCase` does not change (the wire format is the same).
 */
export interface ValueMessage {
  nullValue?: 'NULL_VALUE' | 0;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: StructMessage;
  listValue?: { values?: ValueMessage[] };
  kind?: 'nullValue' | 'numberValue' | 'stringValue' | 'boolValue' | 'structValue' | 'listValue';
}
export interface StructMessage {
  fields?: Record<string, ValueMessage>;
}
/** google.protobuf.StringValue */
export interface StringValueMessage {
  value?: string;
}

/** Names of the oneof members a descriptor reads and writes. */
export type ProtoField = 'ndarray' | 'dataframe' | 'series' | 'file' | 'text' | 'json' | 'multipart';

/** The oneof members a multipart part, a request and a response all carry. */
export interface PayloadMembers {
  ndarray?: NDArrayMessage;
  dataframe?: DataFrameMessage;
  series?: SeriesMessage;
  file?: FileMessage;
  text?: StringValueMessage;
  json?: ValueMessage;
  serialized_bytes?: Buffer | Uint8Array;
}

export interface PartMessage extends PayloadMembers {
  representation?: ProtoField | 'serialized_bytes';
}

export interface MultipartMessage {
  fields?: Record<string, PartMessage>;
}

/** The payload of one typed oneof member: what `fromProto` receives and `toProto` returns. */
export type ProtoPayload =
  | NDArrayMessage
  | DataFrameMessage
  | SeriesMessage
  | FileMessage
  | StringValueMessage
  | ValueMessage
  | MultipartMessage;

/** A response's payload: one member, multipart included, named by `content`. */
export interface ResponseMessage extends PayloadMembers {
  multipart?: MultipartMessage;
  content?: ProtoField | 'serialized_bytes';
}

/** A request carries a response-shaped payload addressed to one API. */
export interface RequestMessage extends ResponseMessage {
  api_name?: string;
}
