import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GrpcServerHandle,
  inferenceClientConstructor,
  inferenceV2ProtoPath,
  NDArray,
  NumpyNdarray,
  type RequestMessage,
  type ResponseMessage,
  Service,
  serveGrpc,
  Text,
} from '../../src/index.js';
import { start } from '../server/helpers.js';

/**
 * The response cache over the Open Inference Protocol (docs/cache.md, other protocols): `POST /v2/models/<api>/infer`
 * of an API with `cache` is answered from it for a repeated request, JSON or binary tensors, `Tiffin-Cache` saying
 * where the answer came from; `Cache-Control: no-cache` runs the function; `parameters.priority` and `timeout`
 * are not part of the key; an API with a `when` is not cached there.
 */
const runs: Record<string, number> = { double: 0, judged: 0, shout: 0 };
const svc = new Service('tensors', { version: '2' });
const ndarray = () => ({
  input: new NumpyNdarray({ dtype: 'float32' }),
  output: new NumpyNdarray({ dtype: 'float32' }),
});
svc.api({ ...ndarray(), cache: true }, function double(x: NDArray) {
  runs.double = (runs.double ?? 0) + 1;
  return NDArray.from(
    Array.from(x.data as Float32Array, (v) => v * 2),
    'float32',
  );
});
svc.api({ ...ndarray(), cache: { when: () => true } }, function judged(x: NDArray) {
  runs.judged = (runs.judged ?? 0) + 1;
  return x;
});

svc.api({ input: new Text(), output: new Text(), cache: true }, function shout(text: string) {
  runs.shout = (runs.shout ?? 0) + 1;
  return text.toUpperCase();
});

let server: Awaited<ReturnType<typeof start>>;
let rpc: GrpcServerHandle;
let client: grpc.Client & Record<string, (...args: unknown[]) => grpc.ClientUnaryCall>;
beforeAll(async () => {
  server = await start(svc);
  // gRPC beside it, as `tiffin serve --grpc` runs it: the HTTP server's runtime and response cache.
  rpc = await serveGrpc(svc, {
    port: 0,
    runtime: server.app.runtime,
    cache: server.app.cache,
    logger: false,
  });
  const definition = protoLoader.loadSync(inferenceV2ProtoPath(), {
    keepCase: true,
    longs: String,
    defaults: true,
  });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    inference: { GRPCInferenceService: grpc.ServiceClientConstructor };
  };
  client = new pkg.inference.GRPCInferenceService(
    rpc.address,
    grpc.credentials.createInsecure(),
  ) as unknown as typeof client;
});
afterAll(async () => {
  client?.close();
  await rpc?.close();
  await server.close();
});

/** One ModelInfer: its answer and the `tiffin-cache` initial metadata it came with. */
function grpcInfer(
  request: Record<string, unknown>,
  metadata = new grpc.Metadata(),
): Promise<{
  cache: string | undefined;
  outputs: Array<{ contents: { fp32_contents: number[] } }>;
  raw: Buffer[];
}> {
  return new Promise((resolve, reject) => {
    let cache: string | undefined;
    const call = client.ModelInfer!(
      request,
      metadata,
      (err: grpc.ServiceError | null, res: Record<string, unknown>) =>
        err
          ? reject(err)
          : resolve({
              cache,
              outputs: res.outputs as Array<{ contents: { fp32_contents: number[] } }>,
              raw: res.raw_output_contents as Buffer[],
            }),
    );
    call.on('metadata', (m: grpc.Metadata) => {
      cache = m.get('tiffin-cache')[0]?.toString();
    });
  });
}

const infer = (api: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/v2/models/${api}/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const tensor = (data: number[]) => ({
  inputs: [{ name: 'input', datatype: 'FP32', shape: [data.length], data }],
});

describe('the Open Inference Protocol with cache', () => {
  it('answers a repeated JSON request from the cache, whatever its priority and timeout', async () => {
    const before = runs.double;
    const first = await infer('double', tensor([1, 2]));
    expect(first.headers.get('tiffin-cache')).toBe('miss');
    const body = await first.json();
    const again = await infer('double', { ...tensor([1, 2]), parameters: { priority: 0, timeout: 5 } });
    expect(again.status).toBe(200);
    expect(again.headers.get('tiffin-cache')).toBe('hit');
    expect(await again.json()).toEqual(body);
    expect(runs.double).toBe((before ?? 0) + 1);
    expect((await infer('double', tensor([1, 3]))).headers.get('tiffin-cache')).toBe('miss');
  });

  it('keeps a binary answer apart from the JSON one, and sends it back byte for byte', async () => {
    const binary = { ...tensor([4, 5]), parameters: { binary_data_output: true } };
    const first = await infer('double', binary);
    expect(first.headers.get('tiffin-cache')).toBe('miss');
    expect(first.headers.get('content-type')).toBe('application/octet-stream');
    const bytes = new Uint8Array(await first.arrayBuffer());
    const again = await infer('double', binary);
    expect(again.headers.get('tiffin-cache')).toBe('hit');
    expect(again.headers.get('inference-header-content-length')).toBe(
      first.headers.get('inference-header-content-length'),
    );
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(bytes);
    const json = await infer('double', tensor([4, 5]));
    expect(json.headers.get('tiffin-cache')).toBe('miss');
    expect(json.headers.get('content-type')).toContain('application/json');
  });

  it('runs the function for Cache-Control: no-cache, and the echoed id is part of the key', async () => {
    await infer('double', tensor([7]));
    const before = runs.double ?? 0;
    const fresh = await infer('double', tensor([7]), { 'cache-control': 'no-cache' });
    expect(fresh.headers.get('tiffin-cache')).toBe('miss');
    const other = await infer('double', { ...tensor([7]), id: 'call-1' });
    expect(other.headers.get('tiffin-cache')).toBe('miss');
    expect(((await other.json()) as { id: string }).id).toBe('call-1');
    expect(runs.double).toBe(before + 2);
  });

  it('does not cache an API whose cache judges the decoded input (when)', async () => {
    for (let i = 0; i < 2; i++)
      expect((await infer('judged', tensor([1]))).headers.get('tiffin-cache')).toBeNull();
    expect(runs.judged).toBe(2);
  });

  it('counts the hits and misses by API', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/^tiffin_api_server_cache_hits_total\{api_name="double"[^}]*\} [1-9]/m);
    expect(text).toMatch(/^tiffin_api_server_cache_misses_total\{api_name="double"[^}]*\} [1-9]/m);
  });
});

describe('gRPC ModelInfer with cache', () => {
  const request = (data: number[], extra: Record<string, unknown> = {}) => ({
    model_name: 'double',
    inputs: [{ name: 'input', datatype: 'FP32', shape: [data.length], contents: { fp32_contents: data } }],
    ...extra,
  });

  it('answers a repeated request from the cache with the same message, and says so in its metadata', async () => {
    const before = runs.double ?? 0;
    const first = await grpcInfer(request([3, 9]));
    expect(first.cache).toBe('miss');
    expect(first.outputs[0]?.contents.fp32_contents).toEqual([6, 18]);
    const again = await grpcInfer(request([3, 9], { parameters: { priority: { int64_param: 0 } } }));
    expect(again.cache).toBe('hit');
    expect(again.outputs).toEqual(first.outputs);
    expect(runs.double).toBe(before + 1);
  });

  it('keeps raw contents byte for byte, apart from the typed ones', async () => {
    const raw = {
      model_name: 'double',
      inputs: [{ name: 'input', datatype: 'FP32', shape: [2] }],
      raw_input_contents: [Buffer.from(new Float32Array([1.5, 2.5]).buffer)],
    };
    const first = await grpcInfer(raw);
    expect(first.cache).toBe('miss');
    const again = await grpcInfer(raw);
    expect(again.cache).toBe('hit');
    expect(Buffer.concat(again.raw)).toEqual(Buffer.concat(first.raw));
    expect([...new Float32Array(new Uint8Array(Buffer.concat(again.raw)).buffer)]).toEqual([3, 5]);
  });

  it('runs the model for metadata cache-control: no-cache', async () => {
    await grpcInfer(request([8]));
    const metadata = new grpc.Metadata();
    metadata.set('cache-control', 'no-cache');
    expect((await grpcInfer(request([8]), metadata)).cache).toBe('miss');
  });
});

describe("gRPC Call (Tiffin's own protocol) with cache", () => {
  type CallClient = grpc.Client & {
    Call(
      req: RequestMessage,
      metadata: grpc.Metadata,
      cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void,
    ): grpc.ClientUnaryCall;
  };
  let native: CallClient;
  beforeAll(() => {
    const Ctor = inferenceClientConstructor();
    native = new Ctor(rpc.address, grpc.credentials.createInsecure()) as unknown as CallClient;
  });
  afterAll(() => native?.close());

  const shout = (text: string, metadata = new grpc.Metadata()) =>
    new Promise<{ cache: string | undefined; text: unknown }>((resolve, reject) => {
      let cache: string | undefined;
      const call = native.Call(
        { api_name: 'shout', text: { value: text } } as RequestMessage,
        metadata,
        (err, res) =>
          err ? reject(err) : resolve({ cache, text: (res as { text?: { value?: string } }).text?.value }),
      );
      call.on('metadata', (m: grpc.Metadata) => {
        cache = m.get('tiffin-cache')[0]?.toString();
      });
    });

  it('answers a repeated Call from the cache, and runs afresh for cache-control: no-cache', async () => {
    const before = runs.shout ?? 0;
    expect(await shout('quiet')).toEqual({ cache: 'miss', text: 'QUIET' });
    expect(await shout('quiet')).toEqual({ cache: 'hit', text: 'QUIET' });
    expect(runs.shout).toBe(before + 1);
    const metadata = new grpc.Metadata();
    metadata.set('cache-control', 'no-cache');
    expect((await shout('quiet', metadata)).cache).toBe('miss');
    expect(runs.shout).toBe(before + 2);
  });
});
