/** gRPC status codes (numeric values of grpc's `status` enum). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
/** A status's name, e.g. `NOT_FOUND`. */
export type GrpcStatusName = keyof typeof GrpcStatus;
export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

/** HTTP status → gRPC status, as the table of docs/spec/io-descriptors.md §1.2 gives it. */
export function grpcStatusForHttp(status: number): GrpcStatusCode {
  switch (status) {
    case 200:
      return GrpcStatus.OK;
    case 400:
      return GrpcStatus.INVALID_ARGUMENT;
    case 401:
      return GrpcStatus.UNAUTHENTICATED;
    case 403:
      return GrpcStatus.PERMISSION_DENIED;
    case 404:
      return GrpcStatus.NOT_FOUND;
    case 408:
      return GrpcStatus.DEADLINE_EXCEEDED;
    case 413:
      return GrpcStatus.RESOURCE_EXHAUSTED;
    case 422:
      return GrpcStatus.FAILED_PRECONDITION;
    case 429:
    case 502:
    case 503:
      return GrpcStatus.UNAVAILABLE;
    case 500:
      return GrpcStatus.INTERNAL;
    case 501:
      return GrpcStatus.UNIMPLEMENTED;
    case 504:
      return GrpcStatus.DEADLINE_EXCEEDED;
    default:
      return GrpcStatus.UNKNOWN;
  }
}
