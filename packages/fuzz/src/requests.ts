import fc from 'fast-check';
import {
  contentTypeFor,
  csvText,
  imageBytes,
  jsonText,
  multipartPayload,
  type Payload,
  parquetBytes,
} from './bodies.js';
import { API_FAMILIES, type BodyFamily } from './service.js';
import { inferHttpCase } from './v2-cases.js';

/** How the body is framed on the wire; the last four are lies or errors in the framing itself. */
export type Framing = 'length' | 'chunked' | 'bad-chunked' | 'short-body' | 'long-body' | 'double-length';

/** One hostile HTTP request, as raw parts the sender writes byte for byte. */
export interface FuzzRequest {
  method: string;
  path: string;
  payload: Payload;
  framing: Framing;
  /** Extra header lines (name, value); may be many or huge. */
  headers: Array<[string, string]>;
}

const RIGHT_TYPES: Record<BodyFamily, readonly string[]> = {
  json: ['application/json', 'application/json; charset=utf-8'],
  text: ['text/plain', 'text/plain; charset=utf-8'],
  bytes: ['application/octet-stream', 'text/csv'],
  csv: ['text/csv'],
  multipart: ['multipart/form-data; boundary=b'],
  table: ['application/json', 'text/csv', 'application/vnd.apache.parquet'],
  image: ['image/png', 'image/jpeg', 'image/bmp'],
};

const anyBytes = fc
  .uint8Array({ maxLength: 512 })
  .map((b) => ({ kind: 'bytes/random', body: Buffer.from(b) }));

function bodyFor(family: BodyFamily): fc.Arbitrary<{ kind: string; body: Buffer }> {
  switch (family) {
    case 'json':
      return fc.oneof({ weight: 5, arbitrary: jsonText }, { weight: 1, arbitrary: anyBytes });
    case 'text':
      return fc.oneof(jsonText, anyBytes);
    case 'bytes':
    case 'csv':
      return fc.oneof(csvText, anyBytes, imageBytes);
    case 'table':
      return fc.oneof(jsonText, csvText, parquetBytes);
    case 'image':
      return fc.oneof({ weight: 4, arbitrary: imageBytes }, { weight: 1, arbitrary: anyBytes });
    case 'multipart':
      return anyBytes;
  }
}

function payloadFor(family: BodyFamily): fc.Arbitrary<Payload> {
  const plain = fc
    .tuple(bodyFor(family), contentTypeFor(RIGHT_TYPES[family]))
    .map(([b, contentType]): Payload => ({ ...b, contentType }));
  // Every API that reads files also reads multipart forms.
  if (family === 'multipart' || family === 'bytes' || family === 'csv' || family === 'image') {
    return fc.oneof({ weight: 3, arbitrary: multipartPayload }, { weight: 1, arbitrary: plain });
  }
  return plain;
}

const framing: fc.Arbitrary<Framing> = fc.oneof(
  { weight: 14, arbitrary: fc.constant('length' as const) },
  { weight: 2, arbitrary: fc.constant('chunked' as const) },
  { weight: 1, arbitrary: fc.constantFrom('bad-chunked', 'short-body', 'long-body', 'double-length') },
);

const extraHeaders: fc.Arbitrary<Array<[string, string]>> = fc.oneof(
  { weight: 10, arbitrary: fc.constant([] as Array<[string, string]>) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 300 })
      .map((n) => Array.from({ length: n }, (_, i) => [`x-h${i}`, 'v'] as [string, string])),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1_000, max: 80_000 })
      .map((n) => [['x-big', 'b'.repeat(n)]] as Array<[string, string]>),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}$/),
        fc.stringMatching(/^[\x20-\x7e\x80-\xff]{0,60}$/),
      )
      .map(([k, v]) => [[k, v]] as Array<[string, string]>),
  },
  {
    // A call's urgency and deadline (docs/server.md, queues): out of range, malformed, huge; never a 5xx.
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.oneof(
          fc.constantFrom(
            'u=0',
            'u=7, i',
            'u=99',
            'u=-1',
            'u=1.5',
            'u="0"',
            'u=',
            ',,',
            `u=0, ${'x'.repeat(9000)}`,
          ),
          fc.stringMatching(/^[\x20-\x7e]{0,80}$/),
        ),
        fc.oneof(
          fc.constantFrom('0.5', '30', '1e400', 'NaN', '-1', '0', 'Infinity', '9'.repeat(400), '1, 2'),
          fc.stringMatching(/^[\x20-\x7e]{0,40}$/),
        ),
      )
      .map(
        ([priority, timeout]) =>
          [
            ['priority', priority],
            ['tiffin-timeout', timeout],
          ] as Array<[string, string]>,
      ),
  },
  {
    weight: 1,
    arbitrary: fc.constant([
      ['authorization', 'Bearer x'],
      ['x-request-id', 'r'.repeat(500)],
    ] as Array<[string, string]>),
  },
);

const PATHS = Object.keys(API_FAMILIES) as Array<keyof typeof API_FAMILIES>;

/** An API call: the path's own kind of body most of the time, another descriptor's now and then. */
const apiCall: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    fc.constantFrom(...PATHS),
    fc.boolean(),
    fc.constantFrom(...(Object.values(API_FAMILIES) as BodyFamily[])),
  )
  .chain(([path, own, other]) =>
    fc.record({
      method: fc.constant('POST'),
      path: fc.constant(path as string),
      payload: payloadFor(own ? API_FAMILIES[path] : other),
      framing,
      headers: extraHeaders,
    }),
  );

/** Everything else: other methods, unknown and odd paths, the docs, the probes. */
const otherCall: fc.Arbitrary<FuzzRequest> = fc.record({
  method: fc.constantFrom(
    'GET',
    'HEAD',
    'PUT',
    'DELETE',
    'OPTIONS',
    'PATCH',
    'CONNECT',
    'TRACE',
    'PROPFIND',
    'BREW',
  ),
  path: fc.oneof(
    fc.constantFrom(
      '/',
      '/docs.json',
      '/livez',
      '/readyz',
      '/metrics',
      '/json/',
      '/static_content/x',
      '//',
      '/%ff',
      '*',
    ),
    fc.stringMatching(/^\/[\x21-\x7e]{0,80}$/),
    fc.constant(`/${'p'.repeat(9000)}`),
    // A task's routes with hostile ids: odd bytes, percent-escapes, repeats, huge.
    fc
      .tuple(
        fc.constantFrom('status', 'get', 'cancel', 'events'),
        fc.oneof(
          fc.stringMatching(/^[\x21-\x7e]{0,200}$/),
          fc.constantFrom('', '%ff%fe', '%E2%98%83', 'a&id=b', '..%2F..%2F', '%00'),
          fc.constant('9'.repeat(5000)),
        ),
      )
      .map(([op, id]) => `/json/${op}?id=${id}`),
  ),
  payload: fc.constant({ kind: 'empty', contentType: null, body: Buffer.alloc(0) }),
  framing: fc.constant('length' as const),
  headers: extraHeaders,
});

/** The Open Inference Protocol's infer route, JSON and binary, with its own header lines. */
const inferCall: fc.Arbitrary<FuzzRequest> = fc
  .tuple(inferHttpCase, framing, extraHeaders)
  .map(([c, frame, extra]) => ({
    method: 'POST',
    path: c.path,
    payload: c.payload,
    framing: frame,
    headers: [...c.headers, ...extra],
  }));

export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  { weight: 8, arbitrary: apiCall },
  { weight: 2, arbitrary: inferCall },
  { weight: 1, arbitrary: otherCall },
);
