import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadInput,
  File,
  type GrpcServerHandle,
  inferenceClientConstructor,
  JSON as JSONDescriptor,
  MemoryLogger,
  Multipart,
  NDArray,
  NotFound,
  NumpyNdarray,
  type RequestMessage,
  type ResponseMessage,
  type ServerHandle,
  Service,
  serve,
  serveGrpc,
  Text,
  UnprocessableEntity,
} from '../../src/index.js';
import { GrpcStatus } from '../../src/internal.js';
import type { ProtoField } from '../../src/wire/proto/messages.js';
import { PlainText } from '../server/helpers.js';
import { healthClient } from './health-client.js';

/** An HTTP-only descriptor: its oneof members are none the default gRPC side reads or writes. */
class NoGrpcText extends PlainText {
  override readonly protoFields: readonly ProtoField[] = [];
}

/** Runs of `http_only_output`, whose output has no gRPC side: a gRPC call must not run it. */
let outputOnlyRuns = 0;

function buildService(): Service {
  const svc = new Service('grpc_test', { doc: 'gRPC test service' });
  svc.api({ input: new NumpyNdarray(), output: new NumpyNdarray() }, function nd_double(x: NDArray) {
    return NDArray.from(
      (x.toArray() as number[][]).map((row) => row.map((v) => v * 2)),
      'float64',
    );
  });
  svc.api(
    {
      input: new NumpyNdarray({ shape: [2, 2], enforce_shape: true, dtype: 'float32' }),
      output: new NumpyNdarray(),
    },
    function nd_enforced(x: NDArray) {
      return x;
    },
  );
  svc.api(
    { input: new NumpyNdarray({ dtype: 'float32' }), output: new NumpyNdarray() },
    function nd_f32(x: NDArray) {
      return x;
    },
  );
  svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo_json(v: unknown) {
    return v;
  });
  svc.api({ input: new Text(), output: new Text() }, function yo(s: string) {
    return `yo ${s}`;
  });
  // The call's context: its id, the request as descriptors read it, a temp dir removed after the call.
  svc.api({ input: new Text(), output: new Text() }, async function scratch(s: string, ctx) {
    const dir = await ctx.tempDir();
    await writeFile(join(dir, 'note.txt'), s);
    return JSON.stringify({
      requestId: ctx.requestId,
      url: ctx.request.url,
      dir,
      aborted: ctx.request.signal.aborted,
    });
  });
  svc.api({ input: new File(), output: new File() }, function file_echo(f: { bytes: Buffer }) {
    return f.bytes;
  });
  svc.api(
    {
      input: new Multipart({ a: new JSONDescriptor(), b: new Text() }),
      output: new Multipart({ x: new JSONDescriptor(), y: new Text() }),
    },
    function mp(fields: { a: unknown; b: string }) {
      return { x: fields.a, y: fields.b.toUpperCase() };
    },
  );
  // A descriptor whose own protoFields name no member the base class's default gRPC side carries.
  svc.api({ input: new NoGrpcText(), output: new Text() }, function http_only(s: string) {
    return s;
  });
  // A descriptor with only an HTTP side: the base class's gRPC side carries its body in `text`.
  svc.api({ input: new PlainText(), output: new PlainText() }, function default_grpc(s: string) {
    return s.toUpperCase();
  });
  svc.api({ input: new Text(), output: new NoGrpcText() }, function http_only_output(s: string) {
    outputOnlyRuns++;
    return s;
  });
  svc.api({ input: new Text(), output: new Text() }, function raise_error(kind: string) {
    if (kind === 'bad') throw new BadInput('bad thing');
    if (kind === 'nf') throw new NotFound('no such thing');
    if (kind === 'ue') throw new UnprocessableEntity('cannot process');
    throw new Error('secret internal detail');
  });
  return svc;
}

type Client = grpc.Client & {
  Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void): void;
  ServiceMetadata(req: object, cb: (err: grpc.ServiceError | null, res: unknown) => void): void;
};

let grpcServer: GrpcServerHandle;
let httpServer: ServerHandle;
const grpcLog = new MemoryLogger();
let client: Client;

beforeAll(async () => {
  const svc = buildService();
  grpcServer = await serveGrpc(svc, { port: 0, logger: grpcLog });
  httpServer = await serve(svc, { port: 0, host: '127.0.0.1' });
  const Ctor = inferenceClientConstructor();
  client = new Ctor(grpcServer.address, grpc.credentials.createInsecure()) as unknown as Client;
});

afterAll(async () => {
  client.close();
  await grpcServer.close();
  await httpServer.close();
});

function call(req: RequestMessage): Promise<ResponseMessage> {
  return new Promise((resolve, reject) => client.Call(req, (err, res) => (err ? reject(err) : resolve(res))));
}

async function callError(req: RequestMessage): Promise<grpc.ServiceError> {
  try {
    await call(req);
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error('expected the call to fail');
}

async function http(path: string, body: string, contentType = 'application/json') {
  const res = await fetch(`${httpServer.url}${path}`, {
    method: 'POST',
    body,
    headers: { 'content-type': contentType },
  });
  return { status: res.status, text: await res.text() };
}

describe('gRPC Call dispatches by api_name', () => {
  it("the API function's context is the call's: request id, the API's route, a temp dir removed after the call", async () => {
    const res = await call({ api_name: 'scratch', text: { value: 'kept' } });
    const seen = globalThis.JSON.parse(res.text?.value ?? '') as {
      requestId: string;
      url: string;
      dir: string;
      aborted: boolean;
    };
    expect(seen.requestId).toMatch(/\S/);
    expect(seen.url).toBe('/scratch');
    expect(seen.aborted).toBe(false);
    for (let i = 0; i < 100 && existsSync(seen.dir); i++) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(seen.dir)).toBe(false);
  });

  it('NumpyNdarray: typed values in, typed values out, same as HTTP', async () => {
    const res = await call({
      api_name: 'nd_double',
      ndarray: { dtype: 'DTYPE_DOUBLE', shape: [2, 2], double_values: [1, 2, 3, 4.5] },
    });
    expect(res.content).toBe('ndarray');
    expect(res.ndarray?.shape).toEqual([2, 2]);
    expect(res.ndarray?.double_values).toEqual([2, 4, 6, 9]);
    const viaHttp = await http('/nd_double', '[[1,2],[3,4.5]]');
    expect(globalThis.JSON.parse(viaHttp.text)).toEqual([
      [2, 4],
      [6, 9],
    ]);
  });

  it('NumpyNdarray: serialized_bytes needs a dtype on the descriptor; enforce_shape applies as over HTTP', async () => {
    const bytes = Buffer.from(new Float32Array([1, 2, 3, 4]).buffer);
    const ok = await call({ api_name: 'nd_f32', serialized_bytes: bytes });
    expect(ok.ndarray?.dtype).toBe('DTYPE_FLOAT');
    expect(ok.ndarray?.float_values).toEqual([1, 2, 3, 4]);
    const shaped = await call({
      api_name: 'nd_enforced',
      ndarray: { dtype: 'DTYPE_FLOAT', shape: [2, 2], float_values: [1, 2, 3, 4] },
    });
    expect(shaped.ndarray?.shape).toEqual([2, 2]);
    const untyped = await callError({ api_name: 'nd_double', serialized_bytes: bytes });
    expect(untyped.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    const badShape = await callError({
      api_name: 'nd_enforced',
      ndarray: { dtype: 'DTYPE_FLOAT', shape: [4], float_values: [1, 2, 3, 4] },
    });
    expect(badShape.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(badShape.details).toMatch(/shape/);
    const viaHttp = await http('/nd_enforced', '[1,2,3,4]');
    expect(viaHttp.status).toBe(400);
  });

  it('JSON: google.protobuf.Value both ways', async () => {
    const res = await call({
      api_name: 'echo_json',
      json: {
        structValue: {
          fields: {
            a: { numberValue: 1 },
            b: {
              listValue: { values: [{ stringValue: 'é' }, { boolValue: true }, { nullValue: 'NULL_VALUE' }] },
            },
          },
        },
      },
    });
    expect(res.content).toBe('json');
    const fields = res.json?.structValue?.fields;
    expect(fields?.a?.numberValue).toBe(1);
    expect(fields?.b?.listValue?.values?.[0]?.stringValue).toBe('é');
    expect(fields?.b?.listValue?.values?.[1]?.boolValue).toBe(true);
  });

  it('Text: StringValue, and serialized_bytes as UTF-8', async () => {
    expect((await call({ api_name: 'yo', text: { value: 'Bob' } })).text?.value).toBe('yo Bob');
    expect((await call({ api_name: 'yo', serialized_bytes: Buffer.from('Ann') })).text?.value).toBe('yo Ann');
    expect((await http('/yo', 'Bob', 'text/plain')).text).toBe('yo Bob');
  });

  it('File: bytes round trip with the default kind application/octet-stream (docs/spec/io-descriptors.md D14)', async () => {
    const res = await call({
      api_name: 'file_echo',
      file: { content: Buffer.from([0x81, 0x30, 0x89, 0x39]) },
    });
    expect(res.content).toBe('file');
    expect(Buffer.from(res.file?.content ?? [])).toEqual(Buffer.from([0x81, 0x30, 0x89, 0x39]));
    expect(res.file?.kind).toBe('application/octet-stream');
    const empty = await callError({ api_name: 'file_echo', file: { kind: 'application/octet-stream' } });
    expect(empty.code).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it('Multipart: a map of parts', async () => {
    const res = await call({
      api_name: 'mp',
      multipart: { fields: { a: { json: { numberValue: 3 } }, b: { text: { value: 'hey' } } } },
    });
    expect(res.content).toBe('multipart');
    expect(res.multipart?.fields?.x?.json?.numberValue).toBe(3);
    expect(res.multipart?.fields?.y?.text?.value).toBe('HEY');
    const extra = await callError({
      api_name: 'mp',
      multipart: {
        fields: { a: { json: { numberValue: 3 } }, b: { text: { value: 'x' } }, c: { text: { value: 'y' } } },
      },
    });
    expect(extra.code).toBe(GrpcStatus.INVALID_ARGUMENT);
  });
});

describe('gRPC error mapping', () => {
  it('unknown api_name → NOT_FOUND (docs/spec/io-descriptors.md D14)', async () => {
    const err = await callError({ api_name: 'nope', text: { value: 'x' } });
    expect(err.code).toBe(GrpcStatus.NOT_FOUND);
    expect(err.details).toMatch(/not defined in grpc_test/);
  });

  it('an unset content → INVALID_ARGUMENT', async () => {
    const err = await callError({ api_name: 'yo' });
    expect(err.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(err.details).toBe('"field" cannot be empty.');
  });

  it('a field the descriptor does not accept → INVALID_ARGUMENT naming the accepted ones', async () => {
    const err = await callError({ api_name: 'yo', json: { numberValue: 1 } });
    expect(err.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(err.details).toBe(
      "'Text' accepts one of the following fields: 'text,serialized_bytes' got 'json' instead.",
    );
  });

  it.each([
    ['bad', GrpcStatus.INVALID_ARGUMENT, 'bad thing'],
    ['nf', GrpcStatus.NOT_FOUND, 'no such thing'],
    ['ue', GrpcStatus.FAILED_PRECONDITION, 'cannot process'],
  ])('error class %s → gRPC code %i with the message', async (kind, code, message) => {
    const err = await callError({ api_name: 'raise_error', text: { value: kind } });
    expect(err.code).toBe(code);
    expect(err.details).toBe(message);
  });

  it('an input that names no oneof member takes serialized_bytes as its HTTP body, and refuses a member with 400', async () => {
    const raw = await call({ api_name: 'http_only', serialized_bytes: Buffer.from('x') });
    expect(raw.text?.value).toBe('x');
    const err = await callError({ api_name: 'http_only', text: { value: 'x' } });
    expect(err.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(err.details).toMatch(/accepts one of the following fields: 'serialized_bytes'/);
  });

  it('a descriptor with only an HTTP side is served by the default gRPC side (its body in text or serialized_bytes)', async () => {
    const text = await call({ api_name: 'default_grpc', text: { value: 'héllo' } });
    expect(text.text?.value).toBe('HÉLLO');
    const raw = await call({ api_name: 'default_grpc', serialized_bytes: Buffer.from('abc') });
    expect(raw.text?.value).toBe('ABC');
    // Not UTF-8: the descriptor's own 400, INVALID_ARGUMENT over gRPC.
    const err = await callError({ api_name: 'default_grpc', serialized_bytes: Buffer.from([0xff, 0xfe]) });
    expect(err.code).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it('an API whose output has no gRPC side → UNIMPLEMENTED before its function runs', async () => {
    const err = await callError({ api_name: 'http_only_output', text: { value: 'x' } });
    expect(err.code).toBe(GrpcStatus.UNIMPLEMENTED);
    expect(err.details).toBe('NoGrpcText does not support gRPC output');
    expect(outputOnlyRuns).toBe(0);
  });

  it('an unexpected error → INTERNAL without its details', async () => {
    const err = await callError({ api_name: 'raise_error', text: { value: 'boom' } });
    expect(err.code).toBe(GrpcStatus.INTERNAL);
    expect(err.details).not.toMatch(/secret/);
    // The same answer and log record as over HTTP: the details name the request id the log holds the stack under.
    const requestId = /request id ([0-9a-f]+)/.exec(err.details)?.[1];
    const record = grpcLog.records.find((r) => r.requestId === requestId);
    expect(record).toMatchObject({ level: 'error', msg: 'unhandled error', error: 'secret internal detail' });
    expect(String(record?.stack)).toContain('secret internal detail');
  });
});

describe('ServiceMetadata, health and limits', () => {
  it('describes the service and each API with descriptor ids and spec attributes', async () => {
    const meta = await new Promise<{
      name: string;
      docs: string;
      apis: Array<{
        name: string;
        input: { descriptor_id: string; attributes: { fields: Record<string, unknown> } };
      }>;
    }>((resolve, reject) =>
      client.ServiceMetadata({}, (err, res) => (err ? reject(err) : resolve(res as never))),
    );
    expect(meta.name).toBe('grpc_test');
    expect(meta.docs).toBe('gRPC test service');
    const nd = meta.apis.find((a) => a.name === 'nd_enforced');
    expect(nd?.input.descriptor_id).toBe('tiffin.io.NumpyNdarray');
    expect(Object.keys(nd?.input.attributes.fields ?? {})).toEqual(['args']);
    expect(meta.apis.map((a) => a.name)).toContain('mp');
  });

  it('answers the standard health check', async () => {
    const health = healthClient(grpcServer.address);
    const res = await new Promise<{ status: string }>((resolve, reject) =>
      health.Check({ service: 'bentoml.grpc.v1.BentoService' }, (err, r) => (err ? reject(err) : resolve(r))),
    );
    expect(res.status).toBe('SERVING');
    health.close();
  });

  it('refuses a message over the configured size with RESOURCE_EXHAUSTED', async () => {
    const small = await serveGrpc(buildService(), {
      port: 0,
      maxReceiveMessageLength: 1024,
      log: () => undefined,
    });
    const Ctor = inferenceClientConstructor();
    const c = new Ctor(small.address, grpc.credentials.createInsecure()) as unknown as Client;
    const err = await new Promise<grpc.ServiceError>((resolve) =>
      c.Call({ api_name: 'yo', text: { value: 'x'.repeat(4096) } }, (e) => resolve(e as grpc.ServiceError)),
    );
    expect(err.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    c.close();
    await small.close();
  });
});
