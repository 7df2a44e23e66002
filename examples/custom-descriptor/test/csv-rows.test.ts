import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import {
  inferenceClientConstructor,
  type RequestMessage,
  type ResponseMessage,
  type ServerHandle,
  serve,
  serveGrpc,
} from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import svc from '../service.js';

let http: ServerHandle;

beforeAll(async () => {
  http = await serve(svc, { port: 0, logger: false, handleSignals: false });
});
afterAll(() => http.close());

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

  it('gRPC: the same API over the text field', async () => {
    const rpc = await serveGrpc(svc, {
      port: 0,
      runStartupHooks: false,
      runtime: http.app.runtime,
      log: () => {},
    });
    const Client = inferenceClientConstructor();
    const client = new Client(rpc.address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void): void;
    };
    try {
      const call = (req: RequestMessage) =>
        new Promise<ResponseMessage>((resolve, reject) =>
          client.Call(req, (err, res) => (err ? reject(err) : resolve(res))),
        );
      expect((await call({ api_name: 'row_sums', text: { value: '1,1\n2,2' } })).text?.value).toBe('2\n4');
      await expect(call({ api_name: 'row_sums', text: { value: 'nope' } })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
      });
    } finally {
      client.close();
      await rpc.close();
    }
  });

  it('the docs show this descriptor verbatim', () => {
    const doc = readFileSync(new URL('../../../docs/custom-descriptors.md', import.meta.url), 'utf8');
    const code = readFileSync(new URL('../src/csv-rows.ts', import.meta.url), 'utf8');
    expect(doc).toContain(code.trim());
  });
});
