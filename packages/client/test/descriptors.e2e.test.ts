import {
  JSONDescriptor,
  Multipart,
  NDArray,
  NumpyNdarray,
  type ServerHandle,
  Service,
  serve,
  silentLogger,
  sseEvent,
  Text,
} from '@tiffin/core';
import { Image } from '@tiffin/io-image';
import { jsonModel } from '@tiffin/io-json';
import { PandasDataFrame, PandasSeries } from '@tiffin/io-pandas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type SseMessage } from '../src/index.js';

const User = z.object({ name: z.string(), age: z.number().int().default(30) });

/** One API per descriptor the client knows, each echoing or summarising what it got. */
function buildService() {
  const frameRows = async (df: import('@tiffin/io-pandas').DataFrame) => df;
  let svc = new Service('client-descriptors')
    .api({ name: 'user', input: jsonModel(User), output: jsonModel(User) }, (u) => ({ ...u, age: u.age + 1 }))
    .api(
      {
        name: 'series',
        input: new PandasSeries({ orient: 'index' }),
        output: new PandasSeries({ orient: 'split' }),
      },
      (s) => s,
    )
    .api(
      { name: 'csv', input: new PandasDataFrame(), output: new PandasDataFrame({ default_format: 'csv' }) },
      frameRows,
    )
    .api({ name: 'image', input: new Image({ pilmode: 'RGB' }), output: new JSONDescriptor() }, (img) => ({
      width: img.width,
      height: img.height,
      mode: img.mode,
    }))
    .api(
      { name: 'make_image', input: new JSONDescriptor(), output: new Image({ mime_type: 'image/png' }) },
      (size) => {
        const { w, h } = size as { w: number; h: number };
        return NDArray.from(new Uint8Array(w * h * 3).fill(200), 'uint8').reshape([h, w, 3]);
      },
    )
    .api(
      { name: 'events', input: new Text(), output: new Text({ content_type: 'text/event-stream' }) },
      async function* (t) {
        for (const word of t.split(' ')) yield sseEvent({ event: 'word', data: word, id: word.length });
        yield sseEvent({ data: { done: true } });
      },
    )
    .api(
      {
        name: 'parts',
        input: new Multipart({
          img: new Image(),
          meta: new JSONDescriptor(),
          n: new NumpyNdarray({ dtype: 'int64' }),
        }),
        output: new Multipart({ size: new JSONDescriptor(), note: new Text(), doubled: new NumpyNdarray() }),
      },
      ({ img, meta, n }) => ({
        size: { w: img.width, h: img.height, meta },
        note: 'ok',
        doubled: Array.from(n.data as BigInt64Array, (v) => Number(v) * 2),
      }),
    );
  for (const orient of ['records', 'split', 'index', 'columns', 'values', 'table'] as const) {
    svc = svc.api(
      {
        name: `frame_${orient}`,
        input: new PandasDataFrame({ orient }),
        output: new PandasDataFrame({ orient }),
      },
      frameRows,
    ) as typeof svc;
  }
  return svc;
}

const svc = buildService();
let server: ServerHandle;
beforeAll(async () => {
  server = await serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: silentLogger });
});
afterAll(() => server.close());

describe('@tiffin/client with every descriptor (real server)', () => {
  it('JSON with a model: defaults applied by the server, typed result', async () => {
    const client = createClient<typeof svc>({ baseUrl: server.url });
    expect(await client.user({ name: 'Ada' })).toEqual({ name: 'Ada', age: 31 });
    await expect(client.user({ name: 3 } as never)).rejects.toMatchObject({
      status: 400,
      code: expect.any(String),
    });
  });

  it('DataFrames in every orient: rows and column maps in, rows out', async () => {
    const client = createClient({ baseUrl: server.url });
    const rows = [
      { a: 1, b: 'x' },
      { a: 2, b: 'y' },
    ];
    for (const orient of ['records', 'split', 'index', 'columns', 'table'] as const) {
      expect(await client[`frame_${orient}`]!(rows), orient).toEqual(rows);
      expect(await client[`frame_${orient}`]!({ a: [1, 2], b: ['x', 'y'] }), orient).toEqual(rows);
    }
    // 'values' has no column names: rows come back keyed by position.
    expect(await client.frame_values!(rows)).toEqual([
      { 0: 1, 1: 'x' },
      { 0: 2, 1: 'y' },
    ]);
    // CSV output is pandas' to_csv: the index first.
    const csv = (await client.csv(rows)) as Blob;
    expect(csv.type).toMatch(/text\/csv/);
    expect((await csv.text()).trim().split('\n')).toEqual([',a,b', '0,1,x', '1,2,y']);
  });

  it('Series: values in (list or labels), values out', async () => {
    const client = createClient<typeof svc>({ baseUrl: server.url });
    expect(await client.series([1.5, 2.5])).toEqual([1.5, 2.5]);
    expect(await client.series({ a: 1, b: 2 })).toEqual([1, 2]);
  });

  it('Image: bytes with no type are sniffed; a PNG comes back as a Blob', async () => {
    const client = createClient<typeof svc>({ baseUrl: server.url });
    const png = await client.make_image({ w: 3, h: 2 });
    expect(png.type).toBe('image/png');
    const bytes = new Uint8Array(await png.arrayBuffer());
    expect(await client.image(bytes)).toEqual({ width: 3, height: 2, mode: 'RGB' });
    expect(await client.image(png)).toEqual({ width: 3, height: 2, mode: 'RGB' });
    await expect(client.image(new TextEncoder().encode('not an image'))).rejects.toMatchObject({
      status: 400,
    });
  });

  it('text/event-stream: an async iterable of events, in order', async () => {
    const client = createClient<typeof svc>({ baseUrl: server.url });
    const events: SseMessage[] = [];
    for await (const e of await client.events('to be or')) events.push(e);
    expect(events).toEqual([
      { event: 'word', data: 'to', id: '2' },
      { event: 'word', data: 'be', id: '2' },
      { event: 'word', data: 'or', id: '2' },
      { event: 'message', data: '{"done":true}', id: '2' },
    ]);
  });

  it('Multipart: an object of parts in and out, each by its descriptor', async () => {
    const client = createClient<typeof svc>({ baseUrl: server.url });
    const png = await client.make_image({ w: 4, h: 1 });
    const out = await client.parts({ img: png, meta: { tag: 'é' }, n: [1, 2, 3] });
    expect(out).toEqual({ size: { w: 4, h: 1, meta: { tag: 'é' } }, note: 'ok', doubled: [2, 4, 6] });
  });
});
