import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Fully qualified name of the inference service. */
export const GRPC_SERVICE_NAME = 'bentoml.grpc.v1.BentoService';
const PROTO_RELATIVE = join('proto', 'bentoml', 'grpc', 'v1', 'service.proto');

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
 * Absolute path of the shipped service.proto (under the package's `proto/` folder). Found by walking up
 * from this module, which sits at different depths in `src/` and the bundled `dist/`.
 */
export function protoPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, PROTO_RELATIVE);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`service.proto not found above ${fileURLToPath(import.meta.url)}`);
}

let cached: protoLoader.PackageDefinition | undefined;

/** The package definition of the protocol (loaded once). */
export function loadProtocol(): protoLoader.PackageDefinition {
  cached ??= protoLoader.loadSync(protoPath(), PROTO_LOADER_OPTIONS);
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
