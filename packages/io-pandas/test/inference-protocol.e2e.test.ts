import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  type GrpcServerHandle,
  inferenceV2ProtoPath,
  type ServerHandle,
  Service,
  serve,
  serveGrpc,
  silentLogger,
} from '@tiffin/core';
import { GrpcStatus } from '@tiffin/core/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DataFrame, PandasDataFrame } from '../src/index.js';

// A DataFrame API is a v2 model whose input tensors are its columns.
const svc = new Service('frames').api(
  {
    name: 'total',
    input: new PandasDataFrame({
      orient: 'split',
      columns: ['price', 'qty'],
      dtype: { price: 'float64', qty: 'int64' },
    }),
    output: new PandasDataFrame(),
  },
  async (df: DataFrame) => {
    const price = df.column('price').values as number[];
    const qty = df.column('qty').values as number[];
    const { DataFrame: Frame } = await import('danfojs-node');
    return new Frame({ total: price.map((p, i) => p * qty[i]!), big: qty.map((q) => q > 1) });
  },
);

type Infer = (request: unknown, callback: (err: grpc.ServiceError | null, res: GrpcAnswer) => void) => void;
interface GrpcAnswer {
  outputs: GrpcOutput[];
  raw_output_contents: Buffer[];
}
interface GrpcOutput {
  name: string;
  datatype: string;
  shape: string[];
  contents: { fp64_contents: number[]; bool_contents: boolean[] };
}

let server: ServerHandle;
let rpc: GrpcServerHandle;
let client: grpc.Client & { ModelInfer: Infer };
beforeAll(async () => {
  server = await serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: silentLogger });
  rpc = await serveGrpc(svc, { port: 0, runtime: server.app.runtime, runStartupHooks: false, log: () => {} });
  // A client from the .proto @tiffin/core ships, as a user would build one.
  const definition = protoLoader.loadSync(inferenceV2ProtoPath(), {
    keepCase: true,
    longs: String,
    defaults: true,
  });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    inference: { GRPCInferenceService: grpc.ServiceClientConstructor };
  };
  client = new pkg.inference.GRPCInferenceService(rpc.address, grpc.credentials.createInsecure()) as never;
});
afterAll(async () => {
  client.close();
  await rpc.close();
  await server.close();
});

function modelInfer(request: unknown): Promise<GrpcAnswer> {
  return new Promise((resolve, reject) =>
    client.ModelInfer(request, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

describe('Open Inference Protocol with PandasDataFrame', () => {
  it('lists the declared columns as input tensors', async () => {
    const meta = (await (await fetch(`${server.url}/v2/models/total`)).json()) as Record<string, unknown>;
    expect(meta.inputs).toEqual([
      { name: 'price', datatype: 'FP64', shape: [-1] },
      { name: 'qty', datatype: 'INT64', shape: [-1] },
    ]);
  });

  // Output columns are typed from the JSON the descriptor wrote: integral numbers only → INT64.
  it('maps column tensors to the frame and output columns to tensors', async () => {
    const res = await fetch(`${server.url}/v2/models/total/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        inputs: [
          { name: 'price', shape: [2], datatype: 'FP64', data: [2.5, 4] },
          { name: 'qty', shape: [2, 1], datatype: 'INT64', data: [[3], [1]] },
        ],
      }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Record<string, unknown>).outputs).toEqual([
      { name: 'total', datatype: 'FP64', shape: [2], data: [7.5, 4] },
      { name: 'big', datatype: 'BOOL', shape: [2], data: [true, false] },
    ]);
  });

  it('columns of different lengths are a 400', async () => {
    const res = await fetch(`${server.url}/v2/models/total/infer`, {
      method: 'POST',
      body: JSON.stringify({
        inputs: [
          { name: 'price', shape: [2], datatype: 'FP64', data: [2.5, 4] },
          { name: 'qty', shape: [1], datatype: 'INT64', data: [1] },
        ],
      }),
    });
    expect(res.status).toBe(400);
  });

  it('over gRPC (inference.GRPCInferenceService) the columns are the input tensors too, typed or raw', async () => {
    const typed = await modelInfer({
      model_name: 'total',
      inputs: [
        { name: 'price', shape: [2], datatype: 'FP64', contents: { fp64_contents: [2.5, 4] } },
        { name: 'qty', shape: [2, 1], datatype: 'INT64', contents: { int64_contents: ['3', '1'] } },
      ],
    });
    expect(typed.outputs.map((o) => [o.name, o.datatype, o.shape])).toEqual([
      ['total', 'FP64', ['2']],
      ['big', 'BOOL', ['2']],
    ]);
    expect(typed.outputs[0]!.contents.fp64_contents).toEqual([7.5, 4]);
    expect(typed.outputs[1]!.contents.bool_contents).toEqual([true, false]);
    const raw = await modelInfer({
      model_name: 'total',
      inputs: [
        { name: 'price', shape: [2], datatype: 'FP64' },
        { name: 'qty', shape: [2], datatype: 'INT64' },
      ],
      raw_input_contents: [
        Buffer.from(new Float64Array([2.5, 4]).buffer),
        Buffer.from(new BigInt64Array([3n, 1n]).buffer),
      ],
    });
    expect(raw.outputs.map((o) => o.name)).toEqual(['total', 'big']);
    expect(Array.from(new Float64Array(Uint8Array.from(raw.raw_output_contents[0]!).buffer))).toEqual([
      7.5, 4,
    ]);
    expect(Array.from(raw.raw_output_contents[1]!)).toEqual([1, 0]);
    const bad = await modelInfer({
      model_name: 'total',
      inputs: [
        { name: 'price', shape: [2], datatype: 'FP64', contents: { fp64_contents: [2.5, 4] } },
        { name: 'qty', shape: [1], datatype: 'INT64', contents: { int64_contents: ['1'] } },
      ],
    }).catch((err: grpc.ServiceError) => err);
    expect((bad as grpc.ServiceError).code).toBe(GrpcStatus.INVALID_ARGUMENT);
  });
});
