import { createServer } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  inferenceClientConstructor,
  inferenceV2ProtoPath,
  type RequestMessage,
  type ResponseMessage,
} from '@tiffin/core';

/** gRPC clients of a server under test: the native `bentoml.grpc.v1` one and the Open Inference Protocol's. */

/** A port nothing listens on right now (gRPC needs one fixed up front). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export type NativeClient = grpc.Client & {
  Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void): void;
};

export function nativeClient(port: number): NativeClient {
  const Client = inferenceClientConstructor();
  return new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as NativeClient;
}

/** A `ModelInfer` answer as proto-loader gives it (keepCase, int64 as strings). */
export interface ModelInferAnswer {
  outputs: Array<{ name: string; contents: Record<string, unknown[]> & { bytes_contents?: Buffer[] } }>;
}

export type InferenceV2Client = grpc.Client & {
  ModelInfer(req: unknown, cb: (err: grpc.ServiceError | null, res: ModelInferAnswer) => void): void;
};

export function inferenceV2Client(port: number): InferenceV2Client {
  const pkg = grpc.loadPackageDefinition(
    protoLoader.loadSync(inferenceV2ProtoPath(), { keepCase: true, longs: String }),
  ) as unknown as { inference: { GRPCInferenceService: grpc.ServiceClientConstructor } };
  return new pkg.inference.GRPCInferenceService(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
  ) as unknown as InferenceV2Client;
}
