import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Fully qualified name of the inference service. */
export const GRPC_SERVICE_NAME = 'bentoml.grpc.v1.BentoService';
/** Fully qualified name of the Open Inference Protocol (KServe v2) service, on the same port. */
export const INFERENCE_V2_SERVICE_NAME = 'inference.GRPCInferenceService';
const PROTO_RELATIVE = join('proto', 'bentoml', 'grpc', 'v1', 'service.proto');
const V2_PROTO_RELATIVE = join('proto', 'inference', 'grpc_predict_v2.proto');

/** Options that give the plain-object shape of `messages.ts`. */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: false,
  oneofs: true,
};

/**
 * A shipped .proto by its path under the package's `proto/` folder. Found by walking up from this module,
 * which sits at different depths in `src/` and the bundled `dist/`.
 */
function shippedProto(relative: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`${relative} not found above ${fileURLToPath(import.meta.url)}`);
}

/** Absolute path of the shipped `bentoml/grpc/v1/service.proto`. */
export function protoPath(): string {
  return shippedProto(PROTO_RELATIVE);
}

/** Absolute path of the shipped `inference/grpc_predict_v2.proto` (the Open Inference Protocol). */
export function inferenceV2ProtoPath(): string {
  return shippedProto(V2_PROTO_RELATIVE);
}

let cached: protoLoader.PackageDefinition | undefined;

/** The package definition of both protocols (loaded once; reflection describes both). */
export function loadProtocol(): protoLoader.PackageDefinition {
  cached ??= protoLoader.loadSync([protoPath(), inferenceV2ProtoPath()], PROTO_LOADER_OPTIONS);
  return cached;
}

/** The BentoService service definition, for `server.addService` and for test clients. */
export function inferenceServiceDefinition(): grpc.ServiceDefinition {
  const def = loadProtocol()[GRPC_SERVICE_NAME];
  if (!def || !('Call' in def)) throw new Error(`${GRPC_SERVICE_NAME} missing from service.proto`);
  return def as unknown as grpc.ServiceDefinition;
}

/** A client constructor for the protocol (tests, benchmarks, users' scripts). */
export function inferenceClientConstructor(): grpc.ServiceClientConstructor {
  return grpc.makeGenericClientConstructor(inferenceServiceDefinition(), 'BentoService');
}

/** The `inference.GRPCInferenceService` definition, for `server.addService` and for test clients. */
export function inferenceV2ServiceDefinition(): grpc.ServiceDefinition {
  const def = loadProtocol()[INFERENCE_V2_SERVICE_NAME];
  if (!def || !('ModelInfer' in def)) throw new Error(`${INFERENCE_V2_SERVICE_NAME} missing from its proto`);
  return def as unknown as grpc.ServiceDefinition;
}
