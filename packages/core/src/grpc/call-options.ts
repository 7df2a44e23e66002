import type * as grpc from '@grpc/grpc-js';
import { applyCallOptions } from '../runtime/admission/call-options.js';
import { quantized } from '../runtime/admission/client-timeout.js';
import type { Invocation } from '../runtime/invocation.js';

/**
 * A gRPC call's urgency and deadline (docs/spec/io-descriptors.md §10.9): metadata `priority` read as the
 * RFC 9218 field, the call's own deadline (`grpc-timeout`) as its client's, the peer as its client.
 */
export function grpcCallOptions(invocation: Invocation, call: grpc.ServerUnaryCall<unknown, unknown>): void {
  const priority = call.metadata.get('priority')[0];
  applyCallOptions(invocation, {
    priority: typeof priority === 'string' ? priority : undefined,
    timeout: undefined,
    client: call.getPeer(),
  });
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (!Number.isFinite(at)) return;
  // A deadline already past still counts from now: the call is answered DEADLINE_EXCEEDED without running.
  const seconds = Math.max(0.001, (at - Date.now()) / 1000);
  invocation.clientTimeout = quantized(seconds);
}
