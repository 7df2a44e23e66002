/**
 * One API per descriptor, for the client examples in docs/clients.md (curl, Python, grpcurl), which a test
 * runs against this service. Fixtures the examples send are in fixtures/ (made for this repository).
 *
 *   pnpm start            # serves this file on http://127.0.0.1:3000
 */
import { createHash } from 'node:crypto';
import {
  File,
  JSONDescriptor,
  Multipart,
  NDArray,
  NumpyNdarray,
  Service,
  sseEvent,
  Text,
} from '@tiffin/core';
import { Image } from '@tiffin/io-image';
import { type DataFrame, loadDanfo, PandasDataFrame, PandasSeries, type Series } from '@tiffin/io-pandas';

async function totals(df: DataFrame): Promise<DataFrame> {
  const { DataFrame: Frame } = await loadDanfo();
  const price = df.column('price').values as number[];
  const qty = df.column('qty').values as number[];
  return new Frame({ item: df.column('item').values, total: price.map((p, i) => p * qty[i]!) });
}

const svc = new Service('clients', { version: '1.0.0', doc: 'Every descriptor, one API each.' })
  .api(
    { name: 'scale', input: new NumpyNdarray({ dtype: 'float64' }), output: new NumpyNdarray() },
    (x) =>
      new NDArray(
        Float64Array.from(x.data as Float64Array, (v) => v * 2),
        x.shape,
      ),
  )
  .api({ name: 'keys', input: new JSONDescriptor(), output: new JSONDescriptor() }, (v) =>
    typeof v === 'object' && v !== null ? Object.keys(v).sort() : [],
  )
  .api({ name: 'shout', input: new Text(), output: new Text() }, (t) => t.toUpperCase())
  .api({ name: 'checksum', input: new File(), output: new JSONDescriptor(), example: 'any bytes' }, (f) => ({
    bytes: f.bytes.length,
    sha256: createHash('sha256').update(f.bytes).digest('hex'),
  }))
  .api(
    { name: 'grayscale', input: new Image({ pilmode: 'L' }), output: new Image({ mime_type: 'image/png' }) },
    (img) => img,
  )
  .api(
    {
      name: 'totals',
      input: new PandasDataFrame(),
      output: new PandasDataFrame(),
      example: [{ item: 'tea', price: 2.5, qty: 2 }],
    },
    totals,
  )
  .api(
    {
      name: 'totals_csv',
      input: new PandasDataFrame({ default_format: 'csv' }),
      output: new PandasDataFrame({ default_format: 'csv' }),
      example: 'item,price,qty\ntea,2.5,2\n',
    },
    totals,
  )
  .api(
    { name: 'series_sum', input: new PandasSeries({ dtype: 'float64' }), output: new JSONDescriptor() },
    (s: Series) => ({
      sum: (s.values as number[]).reduce((a, b) => a + b, 0),
    }),
  )
  .api(
    {
      name: 'describe',
      input: new Multipart({ photo: new Image(), note: new Text() }),
      output: new JSONDescriptor(),
    },
    ({ photo, note }) => ({ width: photo.width, height: photo.height, note }),
  )
  .api(
    { name: 'words', input: new Text(), output: new Text({ content_type: 'text/event-stream' }) },
    async function* (t) {
      const words = t.split(/\s+/).filter(Boolean);
      for (const [i, word] of words.entries()) yield sseEvent({ event: 'word', id: i, data: word });
      yield sseEvent({ event: 'done', data: { count: words.length } });
    },
  );

export default svc;
