import { type ServerHandle, Service, serve, silentLogger } from '@tiffin/core';
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

let server: ServerHandle;
beforeAll(async () => {
  server = await serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: silentLogger });
});
afterAll(() => server.close());

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
});
