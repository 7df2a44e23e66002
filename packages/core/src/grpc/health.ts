import type * as grpc from '@grpc/grpc-js';
import { service as healthServiceDefinition, type ServingStatus } from 'grpc-health-check';
import { GrpcStatus } from '../errors/index.js';

/** How often a `Watch` stream re-reads readiness: changes reach watchers within this time. */
const WATCH_POLL_MS = 1000;

interface HealthRequest {
  service?: string;
}

/**
 * The standard `grpc.health.v1.Health` service (Check, Watch, List), answering from the server's readiness as
 * it is now, like `/readyz`: SERVING only while the server serves and every readiness check of the service
 * passes (`svc.addReadinessCheck`). `''` is the whole server; `services` are the names it reports per service.
 * (grpc-health-check's own implementation only serves statuses set by hand, so a failing check would not show.)
 */
export function addHealthService(
  server: grpc.Server,
  services: readonly string[],
  isReady: () => boolean,
): void {
  const names = new Set(['', ...services]);
  const statusOf = (name: string): ServingStatus | undefined =>
    names.has(name) ? (isReady() ? 'SERVING' : 'NOT_SERVING') : undefined;

  server.addService(healthServiceDefinition, {
    check: (call: grpc.ServerUnaryCall<HealthRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const name = call.request.service ?? '';
      const status = statusOf(name);
      if (status) callback(null, { status });
      else callback({ code: GrpcStatus.NOT_FOUND, details: `Health status unknown for service ${name}` });
    },
    watch: (call: grpc.ServerWritableStream<HealthRequest, unknown>) => {
      const name = call.request.service ?? '';
      let last: ServingStatus | 'SERVICE_UNKNOWN' | undefined;
      const send = () => {
        const status = statusOf(name) ?? 'SERVICE_UNKNOWN';
        if (status === last) return;
        last = status;
        call.write({ status });
      };
      send();
      const timer = setInterval(send, WATCH_POLL_MS);
      timer.unref();
      const stop = () => clearInterval(timer);
      call.on('cancelled', stop);
      call.on('close', stop);
      call.on('error', stop);
    },
    list: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const statuses: Record<string, { status: ServingStatus }> = {};
      for (const name of names) statuses[name] = { status: statusOf(name)! };
      callback(null, { statuses });
    },
  });
}
