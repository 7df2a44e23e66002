/**
 * The messages of `inference.GRPCInferenceService` (proto/inference/grpc_predict_v2.proto) as plain objects,
 * in the shape @grpc/proto-loader gives with Tiffin's options (snake_case names, int64/uint64 as decimal
 * strings, bytes as Buffer, absent fields absent, the oneof member's name in `parameter_choice`).
 */

export interface InferParameterMessage {
  parameter_choice?: 'bool_param' | 'int64_param' | 'string_param';
  bool_param?: boolean;
  int64_param?: string | number;
  string_param?: string;
}

export type ParameterMapMessage = Record<string, InferParameterMessage>;

/** Typed elements: only the field of the tensor's datatype is set. */
export interface TensorContentsMessage {
  bool_contents?: boolean[];
  int_contents?: number[];
  int64_contents?: Array<string | number>;
  uint_contents?: number[];
  uint64_contents?: Array<string | number>;
  fp32_contents?: number[];
  fp64_contents?: number[];
  bytes_contents?: Uint8Array[];
}

export interface InferInputTensorMessage {
  name?: string;
  datatype?: string;
  shape?: Array<string | number>;
  parameters?: ParameterMapMessage;
  contents?: TensorContentsMessage;
}

export interface ModelInferRequestMessage {
  model_name?: string;
  model_version?: string;
  id?: string;
  parameters?: ParameterMapMessage;
  inputs?: InferInputTensorMessage[];
  outputs?: Array<{ name?: string; parameters?: ParameterMapMessage }>;
  raw_input_contents?: Uint8Array[];
}

export interface InferOutputTensorMessage {
  name: string;
  datatype: string;
  shape: number[];
  contents?: TensorContentsMessage;
}

export interface ModelInferResponseMessage {
  model_name: string;
  model_version: string;
  id: string;
  outputs: InferOutputTensorMessage[];
  raw_output_contents?: Uint8Array[];
}

/** `ModelReadyRequest` and `ModelMetadataRequest`. */
export interface ModelRequestMessage {
  name?: string;
  version?: string;
}
