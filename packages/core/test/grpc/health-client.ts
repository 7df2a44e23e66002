import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath } from 'grpc-health-check';

export type HealthStatus = { status: string };

/** A `grpc.health.v1.Health` client built from grpc-health-check's own proto, as probes and grpcurl see it. */
export type HealthClient = grpc.Client & {
  Check(req: { service: string }, cb: (err: grpc.ServiceError | null, res: HealthStatus) => void): void;
  Watch(req: { service: string }): grpc.ClientReadableStream<HealthStatus>;
  List(
    req: object,
    cb: (err: grpc.ServiceError | null, res: { statuses: Record<string, HealthStatus> }) => void,
  ): void;
};

export function healthClient(address: string): HealthClient {
  const def = grpc.loadPackageDefinition(loadSync(protoPath, { enums: String })) as unknown as {
    grpc: { health: { v1: { Health: new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client } } };
  };
  return new def.grpc.health.v1.Health(address, grpc.credentials.createInsecure()) as HealthClient;
}
