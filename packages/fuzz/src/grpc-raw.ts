import * as grpc from '@grpc/grpc-js';
import type { RequestMessage } from '@tiffin/core';
import { inferenceServiceDefinition, inferenceV2ServiceDefinition } from '@tiffin/core/internal';

/** The methods whose request bytes the fuzzer sends. */
export type RawMethod = 'Call' | 'ModelInfer';

/**
 * A gRPC client that sends request bytes as given to `BentoService/Call` or
 * `inference.GRPCInferenceService/ModelInfer`: garbage reaches the server's decoder untouched.
 */
export interface RawGrpcClient {
  call(
    bytes: Buffer,
    metadata?: Record<string, string>,
    method?: RawMethod,
  ): Promise<{ code: number; details: string }>;
  close(): void;
}

type RawCall = (
  req: Buffer,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null) => void,
) => void;

function rawClientFor(address: string, definition: grpc.MethodDefinition<unknown, unknown>, name: string) {
  const raw: grpc.ServiceDefinition = {
    [name]: {
      ...definition,
      requestSerialize: (bytes: Buffer) => bytes,
      responseDeserialize: (bytes: Buffer) => bytes,
    },
  };
  const Client = grpc.makeGenericClientConstructor(raw, `Raw${name}`);
  return new Client(address, grpc.credentials.createInsecure()) as unknown as grpc.Client &
    Record<string, RawCall>;
}

export function rawGrpcClient(address: string): RawGrpcClient {
  const clients = {
    Call: rawClientFor(address, inferenceServiceDefinition().Call!, 'Call'),
    ModelInfer: rawClientFor(address, inferenceV2ServiceDefinition().ModelInfer!, 'ModelInfer'),
  };
  return {
    call(bytes, metadata = {}, method = 'Call') {
      const md = new grpc.Metadata();
      for (const [k, v] of Object.entries(metadata)) md.set(k, v);
      return new Promise((resolve) =>
        clients[method][method]!(bytes, md, { deadline: Date.now() + 10_000 }, (err) =>
          resolve(err ? { code: err.code, details: err.details } : { code: 0, details: '' }),
        ),
      );
    },
    close: () => {
      for (const client of Object.values(clients)) client.close();
    },
  };
}

/** A well-formed `Call` request as bytes (to truncate and mutate). */
export function encodeRequest(message: RequestMessage): Buffer {
  return inferenceServiceDefinition().Call!.requestSerialize(message);
}
