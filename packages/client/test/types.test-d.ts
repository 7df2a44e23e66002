import { File, JSONDescriptor, Multipart, NDArray, NumpyNdarray, Service, Text } from '@tiffin/core';
import type { NDArraySource, NestedList, SseMessage, TableRow } from '@tiffin/core/internal';
import { Image } from '@tiffin/io-image';
import { jsonModel } from '@tiffin/io-json';
import { PandasDataFrame, PandasSeries } from '@tiffin/io-pandas';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type quickstart from '../../../examples/quickstart/service.js';
import { createClient, type UntypedApiMethod } from '../src/index.js';

const baseUrl = 'http://127.0.0.1:1';

describe('createClient<typeof quickstart>', () => {
  const client = createClient<typeof quickstart>({ baseUrl });

  it('has one method per API, typed by its descriptors', () => {
    expectTypeOf(client.classify).parameter(0).toEqualTypeOf<NDArraySource>();
    expectTypeOf(client.classify([[1, 2, 3, 4]])).resolves.toEqualTypeOf<NestedList>();
    expectTypeOf(client.classify).toBeCallableWith(new Float64Array(4));
    expectTypeOf(client.classify).toBeCallableWith(NDArray.from([[1, 2, 3, 4]]));
    expectTypeOf(client.sentiment('great')).resolves.toEqualTypeOf<string>();
    expectTypeOf(client.classify_csv(new Uint8Array())).resolves.toEqualTypeOf<Blob>();
    expectTypeOf(client.classify_csv).toBeCallableWith('flowers.csv');
    expectTypeOf(client.classify_csv).toBeCallableWith(new Blob());
    expectTypeOf(client.analyze).toBeCallableWith({ measurements: [[1, 2, 3, 4]], review: 'fine' });
    expectTypeOf(client.classify_json({ any: 'json' })).resolves.toEqualTypeOf<unknown>();
  });

  it('types the task routes of an API like its synchronous call', () => {
    const classify = client.$task('classify');
    expectTypeOf(classify.submit).parameter(0).toEqualTypeOf<NDArraySource>();
    expectTypeOf(classify.submit([[1, 2, 3, 4]])).resolves.toEqualTypeOf<string>();
    expectTypeOf(classify.get('id')).resolves.toEqualTypeOf<NestedList>();
    // @ts-expect-error no such API
    void client.$task('missing');
    // @ts-expect-error Text takes a string
    void client.$task('sentiment').submit(42);
  });

  it('rejects wrong arguments and unknown APIs at compile time', () => {
    // @ts-expect-error Text takes a string
    void client.sentiment(42);
    // @ts-expect-error File takes bytes, a Blob or a path
    void client.classify_csv({ rows: 1 });
    // @ts-expect-error Multipart needs every part
    void client.analyze({ measurements: [[1, 2, 3, 4]] });
    // @ts-expect-error NumpyNdarray does not take an object
    void client.classify({ a: 1 });
    // @ts-expect-error no such API
    void client.missing('x');
  });
});

describe('types from every descriptor', () => {
  const User = z.object({ name: z.string(), age: z.number().int().default(0) });
  const Greeting = z.object({ text: z.string() });
  const svc = new Service('all')
    .api({ name: 'greet', input: jsonModel(User), output: jsonModel(Greeting) }, (u) => ({ text: u.name }))
    .api(
      { name: 'rows', input: new PandasDataFrame(), output: new PandasDataFrame({ orient: 'split' }) },
      (d) => d,
    )
    .api(
      { name: 'csv', input: new PandasDataFrame(), output: new PandasDataFrame({ default_format: 'csv' }) },
      (d) => d,
    )
    .api({ name: 'series', input: new PandasSeries(), output: new PandasSeries() }, (s) => s)
    .api({ name: 'image', input: new Image(), output: new Image({ mime_type: 'image/png' }) }, (i) => i)
    .api(
      { name: 'events', input: new Text(), output: new Text({ content_type: 'text/event-stream' }) },
      (t) => t,
    )
    .api({ name: 'file', input: new File(), output: new File() }, (f) => f.bytes)
    .api(
      {
        name: 'form',
        input: new Multipart({ img: new Image(), meta: new JSONDescriptor() }),
        output: new Multipart({ n: new NumpyNdarray(), note: new Text() }),
      },
      () => ({ n: [1], note: 'x' }),
    );
  // An API registered without a literal name is reachable untyped only.
  svc.api({ input: new Text(), output: new Text() }, function hidden(t) {
    return t;
  });
  const client = createClient<typeof svc>({ baseUrl });

  it('JSON with a model: the model input in, the model output out', () => {
    expectTypeOf(client.greet).toBeCallableWith({ name: 'Ada' });
    expectTypeOf(client.greet({ name: 'Ada', age: 3 })).resolves.toEqualTypeOf<{ text: string }>();
    // @ts-expect-error name is a string
    void client.greet({ name: 1 });
  });

  it('DataFrames: rows or column maps in, rows (JSON) or a Blob (CSV/Parquet) out', () => {
    expectTypeOf(client.rows).toBeCallableWith([{ a: 1, b: 'x' }]);
    expectTypeOf(client.rows).toBeCallableWith({ a: [1, 2], b: ['x', 'y'] });
    expectTypeOf(client.rows([])).resolves.toEqualTypeOf<TableRow[]>();
    expectTypeOf(client.csv([])).resolves.toEqualTypeOf<Blob>();
    expectTypeOf(client.series([1, 2])).resolves.toEqualTypeOf<unknown[]>();
    // @ts-expect-error a DataFrame is not a string
    void client.rows('a,b');
  });

  it('Image and File: binaries in, Blob out; SSE: an async iterable of events', () => {
    expectTypeOf(client.image(new Uint8Array())).resolves.toEqualTypeOf<Blob>();
    expectTypeOf(client.file(new ArrayBuffer(1))).resolves.toEqualTypeOf<Blob>();
    expectTypeOf(client.events('go')).resolves.toEqualTypeOf<AsyncIterable<SseMessage>>();
    expectTypeOf(client.form).toBeCallableWith({ img: new Blob(), meta: { k: 1 } });
    expectTypeOf(client.form).returns.resolves.toEqualTypeOf<{ n: NestedList; note: string }>();
  });

  it('untyped clients take any name', () => {
    // @ts-expect-error hidden has no literal name, so it is not on the typed client
    void client.hidden('x');
    expectTypeOf(client.$call).toBeCallableWith('hidden', 'x');
    const untyped = createClient({ baseUrl });
    expectTypeOf(untyped.anything).toEqualTypeOf<UntypedApiMethod>();
  });
});
