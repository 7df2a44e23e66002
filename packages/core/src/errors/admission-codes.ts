/**
 * The codes of an API queue's refusals and of a client's own deadline (docs/spec/io-descriptors.md §10.9), a
 * part of `ERROR_CODES` (codes.ts), where the rest of the catalog is.
 */
export const ADMISSION_CODES = {
  API_QUEUE_FULL: {
    status: 503,
    type: 'ServiceUnavailable',
    package: '@tiffin/core',
    meaning:
      "as many calls wait in the API's queue as it holds; retry after `Retry-After` (from the queue's drain rate)",
  },
  API_QUEUE_CLIENT_FULL: {
    status: 429,
    type: 'TooManyRequests',
    package: '@tiffin/core',
    meaning: "one client holds its share of the API's queue; retry after `Retry-After`",
  },
  DEADLINE_UNREACHABLE: {
    status: 503,
    type: 'ServiceUnavailable',
    package: '@tiffin/core',
    meaning:
      "the call could not start before its deadline, given the calls ahead of it and the API's measured run time",
  },
  INVALID_TIMEOUT: {
    status: 400,
    type: 'InvalidArgument',
    package: '@tiffin/core',
    meaning: '`Tiffin-Timeout` (or v2 `parameters.timeout`) is not a number of seconds above 0',
  },
} as const;
