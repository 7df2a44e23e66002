/**
 * A small Open Inference Protocol (KServe v2) gRPC client for tests: @grpc/grpc-js with a client built by
 * @grpc/proto-loader from the .proto file the package ships (what a user would load), with its own loader
 * options (defaults on: absent fields read as empty), independent of the server's message code.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { inferenceV2ProtoPath } from '../../src/index.js';

export type Parameter = { bool_param: boolean } | { int64_param: number } | { string_param: string };

export interface Contents {
  bool_contents?: boolean[];
  int_contents?: number[];
  int64_contents?: Array<string | number>;
  uint_contents?: number[];
  uint64_contents?: Array<string | number>;
  fp32_contents?: number[];
  fp64_contents?: number[];
  bytes_contents?: Uint8Array[];
}

export interface InferInput {
  name: string;
  datatype: string;
  shape: Array<number | string>;
  parameters?: Record<string, Parameter>;
  contents?: Contents;
}

export interface InferRequest {
  model_name: string;
  model_version?: string;
  id?: string;
  parameters?: Record<string, Parameter>;
  inputs: InferInput[];
  outputs?: Array<{ name: string; parameters?: Record<string, Parameter> }>;
  raw_input_contents?: Uint8Array[];
}

export interface InferOutput {
  name: string;
  datatype: string;
  shape: string[];
  contents: Required<Contents> | null;
}

export interface InferResponse {
  model_name: string;
  model_version: string;
  id: string;
  outputs: InferOutput[];
  raw_output_contents: Buffer[];
}

type Method = (
  request: unknown,
  metadata: grpc.Metadata,
  callback: (err: grpc.ServiceError | null, response: unknown) => void,
) => void;

export const SERVICE_PATH = '/inference.GRPCInferenceService';

export class V2GrpcClient {
  private readonly client: grpc.Client & Record<string, Method>;

  constructor(
    address: string,
    private readonly token?: string,
  ) {
    const definition = protoLoader.loadSync(inferenceV2ProtoPath(), {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      inference: { GRPCInferenceService: grpc.ServiceClientConstructor };
    };
    this.client = new pkg.inference.GRPCInferenceService(
      address,
      grpc.credentials.createInsecure(),
    ) as unknown as grpc.Client & Record<string, Method>;
  }

  call<T>(method: string, request: unknown, token = this.token): Promise<T> {
    const metadata = new grpc.Metadata();
    if (token) metadata.set('authorization', `Bearer ${token}`);
    return new Promise((resolve, reject) =>
      this.client[method]!.call(this.client, request, metadata, (err, res) =>
        err ? reject(err) : resolve(res as T),
      ),
    );
  }

  /** The status of a call expected to fail. */
  async error(method: string, request: unknown, token = this.token): Promise<grpc.ServiceError> {
    try {
      await this.call(method, request, token);
    } catch (err) {
      return err as grpc.ServiceError;
    }
    throw new Error(`expected ${method} to fail`);
  }

  infer(request: InferRequest, token = this.token): Promise<InferResponse> {
    return this.call('ModelInfer', request, token);
  }

  /** Send bytes as they are to a method (for requests that are not a valid message). */
  raw(method: string, bytes: Buffer): Promise<grpc.ServiceError | null> {
    return new Promise((resolve) =>
      this.client.makeUnaryRequest(
        `${SERVICE_PATH}/${method}`,
        (b: Buffer) => b,
        (b: Buffer) => b,
        bytes,
        (err) => resolve(err ?? null),
      ),
    );
  }

  close(): void {
    this.client.close();
  }
}

/** Little-endian bytes of a typed array (the raw contents layout). */
export function le(array: ArrayBufferView): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

/** BYTES elements in raw contents: a 4-byte little-endian length, then the bytes. */
export function rawBytesElements(items: string[]): Buffer {
  return Buffer.concat(
    items.flatMap((s) => {
      const bytes = Buffer.from(s, 'utf8');
      const length = Buffer.alloc(4);
      length.writeUInt32LE(bytes.length);
      return [length, bytes];
    }),
  );
}
