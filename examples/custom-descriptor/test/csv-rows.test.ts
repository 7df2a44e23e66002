import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createClient } from '@tiffin/client';
import {
  inferenceClientConstructor,
  inferenceV2ProtoPath,
  type RequestMessage,
  type ResponseMessage,
  type ServerHandle,
  serve,
  serveGrpc,
} from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import svc from '../service.js';

/** The code and status of an error answer: every client mistake is a 4xx with a stable code, never a 5xx. */
async function refusal(res: Response): Promise<{ status: number; code: unknown }> {
  const body = (await res.json()) as { code?: unknown };
  return { status: res.status, code: body.code };
}

/** A v2 binary request: the JSON header, then each tensor's bytes (Inference-Header-Content-Length). */
function binaryInfer(header: unknown, bytes: Uint8Array, headerLength?: number): RequestInit {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const body = new Uint8Array(json.length + bytes.length);
  body.set(json);
  body.set(bytes, json.length);
  return {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/octet-stream',
      'inference-header-content-length': String(headerLength ?? json.length),
    },
  };
}

const f64 = (...values: number[]) => new Uint8Array(new Float64Array(values).buffer);

let http: ServerHandle;
/** The gRPC server, on the same runtime as the HTTP one (one gate, one batcher). */
let rpc: Awaited<ReturnType<typeof serveGrpc>>;

beforeAll(async () => {
  http = await serve(svc, { port: 0, logger: false, handleSignals: false });
  rpc = await serveGrpc(svc, { port: 0, runStartupHooks: false, runtime: http.app.runtime, log: () => {} });
});
afterAll(async () => {
  await rpc.close();
  await http.close();
});

const post = (body: string) =>
  fetch(`${http.url}/row_sums`, { method: 'POST', body, headers: { 'content-type': 'text/csv' } });

describe('the custom descriptor of docs/custom-descriptors.md', () => {
  it('HTTP: CSV rows in, CSV rows out', async () => {
    const res = await post('1,2,3\n4,5,6\n');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(await res.text()).toBe('6\n15');
  });

  it('HTTP: a malformed body is a 400 with the one error body', async () => {
    for (const body of ['', '1,x', '1,,2', '\u00e9,1']) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ type: 'BadInput', code: 'BAD_INPUT' });
    }
  });

  it('batching: concurrent requests are answered with their own rows', async () => {
    const bodies = Array.from({ length: 20 }, (_, i) => `${i},${i}\n${i},1`);
    const answers = await Promise.all(bodies.map(async (b) => (await post(b)).text()));
    expect(answers).toEqual(bodies.map((_, i) => `${2 * i}\n${i + 1}`));
  });

  it('OpenAPI: the request body and response come from the schema and the example', async () => {
    const doc = (await (await fetch(`${http.url}/docs.json`)).json()) as {
      paths: Record<
        string,
        { post: Record<string, unknown> & { requestBody: { content: Record<string, unknown> } } }
      >;
    };
    const op = doc.paths['/row_sums']!.post;
    expect(op.requestBody.content['text/csv']).toEqual({
      schema: { type: 'string', description: 'Rows of comma-separated numbers, one per line' },
      example: '5.1,3.5,1.4,0.2\n6.2,2.9,4.3,1.3',
    });
    expect(op['x-tiffin-batching']).toEqual({
      batchable: true,
      batch_dim: 0,
      max_batch_size: 64,
      max_latency_ms: 20,
    });
  });

  it('gRPC: the text field and serialized_bytes carry the CSV; hostile payloads are INVALID_ARGUMENT, never INTERNAL', async () => {
    const Client = inferenceClientConstructor();
    const client = new Client(rpc.address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void): void;
    };
    const call = (req: RequestMessage) =>
      new Promise<ResponseMessage>((resolve, reject) =>
        client.Call(req, (err, res) => (err ? reject(err) : resolve(res))),
      );
    try {
      expect((await call({ api_name: 'row_sums', text: { value: '1,1\n2,2' } })).text?.value).toBe('2\n4');
      const raw = await call({ api_name: 'row_sums', serialized_bytes: Buffer.from('1,2\n3,4') });
      expect(raw.text?.value).toBe('3\n7');
      const hostile: RequestMessage[] = [
        { api_name: 'row_sums', text: { value: 'nope' } },
        { api_name: 'row_sums', serialized_bytes: Buffer.alloc(0) },
        { api_name: 'row_sums', serialized_bytes: Buffer.from([0xff, 0xfe, 0x2c, 0x00]) },
        { api_name: 'row_sums', text: { value: `${'1,2\n'.repeat(10_000)}NaN` } },
        { api_name: 'row_sums', text: { value: '' } },
        { api_name: 'row_sums', ndarray: { shape: [1], double_values: [1] } },
      ];
      for (const req of hostile) {
        await expect(call(req)).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
      }
    } finally {
      client.close();
    }
  });

  it("v2: the model lists the descriptor's tensor; JSON tensors in and out", async () => {
    const meta = await (await fetch(`${http.url}/v2/models/row_sums`)).json();
    expect(meta).toMatchObject({
      name: 'row_sums',
      inputs: [{ name: 'input', datatype: 'FP64', shape: [-1, -1] }],
      outputs: [{ name: 'output', datatype: 'FP64', shape: [-1, -1] }],
    });
    const res = await fetch(`${http.url}/v2/models/row_sums/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        inputs: [{ name: 'input', shape: [2, 3], datatype: 'FP64', data: [1, 2, 3, 4, 5, 6] }],
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      model_name: 'row_sums',
      outputs: [{ name: 'output', datatype: 'FP64', shape: [2, 1], data: [6, 15] }],
    });
  });

  it('v2: binary tensor data in and out', async () => {
    const header = {
      inputs: [{ name: 'input', shape: [2, 2], datatype: 'FP64', parameters: { binary_data_size: 32 } }],
      outputs: [{ name: 'output', parameters: { binary_data: true } }],
    };
    const res = await fetch(`${http.url}/v2/models/row_sums/infer`, binaryInfer(header, f64(1.5, 2.5, 3, 4)));
    expect(res.status).toBe(200);
    const length = Number(res.headers.get('inference-header-content-length'));
    const body = new Uint8Array(await res.arrayBuffer());
    const json = JSON.parse(new TextDecoder().decode(body.subarray(0, length)));
    expect(json.outputs).toEqual([
      { name: 'output', datatype: 'FP64', shape: [2, 1], parameters: { binary_data_size: 16 } },
    ]);
    expect([...new Float64Array(body.slice(length).buffer)]).toEqual([4, 7]);
  });

  it('v2: hostile tensors are 4xx with a code, never 5xx', async () => {
    const url = `${http.url}/v2/models/row_sums/infer`;
    const json = (body: string): RequestInit => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const input = (over: Record<string, unknown>) =>
      json(
        JSON.stringify({
          inputs: [{ name: 'input', shape: [1, 2], datatype: 'FP64', data: [1, 2], ...over }],
        }),
      );
    const cases: RequestInit[] = [
      input({ datatype: 'BYTES', data: ['1', '2'] }),
      input({ shape: [2], data: [1, 2] }),
      input({ shape: [0, 2], data: [] }),
      input({ shape: [1, 3] }),
      input({ shape: [1e9, 1e9] }),
      input({ data: [1, 'x'] }),
      input({ datatype: 'FP128' }),
      json(
        JSON.stringify({
          inputs: [
            { name: 'input', shape: [1, 1], datatype: 'FP64', data: [1] },
            { name: 'b', shape: [1, 1], datatype: 'FP64', data: [1] },
          ],
        }),
      ),
      json(`{"inputs": ${'['.repeat(10_000)}`),
      json('{"inputs": [{"name": "input", "shape": [1, 2], "datatype": "FP64", "data": [1, 2]'),
      json('{}'),
      binaryInfer(
        {
          inputs: [{ name: 'input', shape: [1, 2], datatype: 'FP64', parameters: { binary_data_size: 16 } }],
        },
        f64(1, Number.NaN),
      ),
      binaryInfer(
        {
          inputs: [{ name: 'input', shape: [1, 2], datatype: 'FP64', parameters: { binary_data_size: 16 } }],
        },
        f64(1),
      ),
      binaryInfer(
        {
          inputs: [
            { name: 'input', shape: [1e6, 1e6], datatype: 'FP64', parameters: { binary_data_size: 8e12 } },
          ],
        },
        f64(1),
      ),
      binaryInfer({ inputs: [] }, f64(1), 1_000_000),
    ];
    for (const init of cases) {
      const { status, code } = await refusal(await fetch(url, init));
      expect(status, String(init.body).slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(status, String(init.body).slice(0, 80)).toBeLessThan(500);
      expect(typeof code).toBe('string');
    }
  });

  it('v2 over gRPC (ModelInfer): typed contents and raw bytes; hostile tensors are INVALID_ARGUMENT', async () => {
    const definition = protoLoader.loadSync(inferenceV2ProtoPath(), {
      keepCase: true,
      longs: String,
      oneofs: true,
    });
    const { inference } = grpc.loadPackageDefinition(definition) as unknown as {
      inference: { GRPCInferenceService: grpc.ServiceClientConstructor };
    };
    const client = new inference.GRPCInferenceService(
      rpc.address,
      grpc.credentials.createInsecure(),
    ) as unknown as grpc.Client & {
      ModelInfer(req: unknown, cb: (err: grpc.ServiceError | null, res: V2Answer) => void): void;
    };
    type V2Answer = {
      outputs: Array<{ shape: string[]; contents?: { fp64_contents?: number[] } }>;
      raw_output_contents?: Buffer[];
    };
    const infer = (req: Record<string, unknown>) =>
      new Promise<V2Answer>((resolve, reject) =>
        client.ModelInfer({ model_name: 'row_sums', ...req }, (err, res) =>
          err ? reject(err) : resolve(res),
        ),
      );
    const input = (shape: number[], extra: Record<string, unknown> = {}) => ({
      name: 'input',
      datatype: 'FP64',
      shape,
      ...extra,
    });
    try {
      const typed = await infer({ inputs: [input([2, 2], { contents: { fp64_contents: [1, 2, 3, 4] } })] });
      expect(typed.outputs[0]).toMatchObject({ shape: ['2', '1'], contents: { fp64_contents: [3, 7] } });
      const raw = await infer({ inputs: [input([1, 3])], raw_input_contents: [Buffer.from(f64(1, 2, 3))] });
      const bytes = raw.raw_output_contents![0]!;
      expect([
        ...new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)),
      ]).toEqual([6]);
      const hostile: Array<Record<string, unknown>> = [
        { inputs: [input([2], { contents: { fp64_contents: [1, 2] } })] },
        { inputs: [input([1, 2], { contents: { fp64_contents: [1] } })] },
        { inputs: [input([1, 2])], raw_input_contents: [Buffer.from(f64(1, Number.POSITIVE_INFINITY))] },
        { inputs: [input([1e9, 1e9])], raw_input_contents: [Buffer.from(f64(1))] },
        {
          inputs: [
            {
              name: 'input',
              datatype: 'BYTES',
              shape: [1, 1],
              contents: { bytes_contents: [Buffer.from('1')] },
            },
          ],
        },
        { inputs: [] },
      ];
      for (const req of hostile) {
        await expect(infer(req)).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
      }
    } finally {
      client.close();
    }
  });

  it('@tiffin/client: the typed client sends and reads the CSV text, learnt from /docs.json', async () => {
    const client = createClient<typeof svc>({ baseUrl: http.url });
    const sums: string = await client.row_sums('1,2\n3,4,5');
    expect(sums).toBe('3\n12');
    const apis = await client.$apis();
    expect(apis.get('row_sums')).toMatchObject({
      input: { form: 'text', mediaType: 'text/csv' },
      output: { form: 'text', mediaType: 'text/csv' },
    });
    await expect(client.row_sums('1,x')).rejects.toMatchObject({ status: 400, code: 'BAD_INPUT' });
  });

  it('the docs show this descriptor verbatim', () => {
    const doc = readFileSync(new URL('../../../docs/custom-descriptors.md', import.meta.url), 'utf8');
    const code = readFileSync(new URL('../src/csv-rows.ts', import.meta.url), 'utf8');
    expect(doc).toContain(code.trim());
  });
});
