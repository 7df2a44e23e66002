import * as grpc from '@grpc/grpc-js';
import type { RequestMessage } from '@tiffin/core';
import { inferenceServiceDefinition } from '@tiffin/core/internal';

/** A gRPC client that sends `Call` request bytes as given: garbage reaches the server's decoder untouched. */
export interface RawGrpcClient {
  call(bytes: Buffer, metadata?: Record<string, string>): Promise<{ code: number; details: string }>;
  close(): void;
}

export function rawGrpcClient(address: string): RawGrpcClient {
  const call = inferenceServiceDefinition().Call!;
  const definition: grpc.ServiceDefinition = {
    Call: {
      ...call,
      requestSerialize: (bytes: Buffer) => bytes,
      responseDeserialize: (bytes: Buffer) => bytes,
    },
  };
  const Client = grpc.makeGenericClientConstructor(definition, 'RawBentoService');
  const client = new Client(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    Call(
      req: Buffer,
      metadata: grpc.Metadata,
      options: grpc.CallOptions,
      cb: (err: grpc.ServiceError | null) => void,
    ): void;
  };
  return {
    call(bytes, metadata = {}) {
      const md = new grpc.Metadata();
      for (const [k, v] of Object.entries(metadata)) md.set(k, v);
      return new Promise((resolve) =>
        client.Call(bytes, md, { deadline: Date.now() + 10_000 }, (err) =>
          resolve(err ? { code: err.code, details: err.details } : { code: 0, details: '' }),
        ),
      );
    },
    close: () => client.close(),
  };
}

/** A well-formed `Call` request as bytes (to truncate and mutate). */
export function encodeRequest(message: RequestMessage): Buffer {
  return inferenceServiceDefinition().Call!.requestSerialize(message);
}
