import {
  File,
  JSON as JSONDescriptor,
  Multipart,
  type NDArray,
  NumpyNdarray,
  Service,
  Text,
} from '@tiffin/core';
import type { FileInput } from '@tiffin/core/internal';
import { Image } from '@tiffin/io-image';
import { type DataFrame, PandasDataFrame, PandasSeries, type Series } from '@tiffin/io-pandas';

/**
 * The service the fuzzer attacks: one echo API per descriptor (and per option that changes the parsing or the
 * writing), so every parser and every writer sees hostile input and what it turned into.
 */
export function fuzzService(): Service {
  // The JSON API is a task too (`/json/submit`, `/json/status?id=` ...): its routes and ids are attacked as well.
  // Room for every task a run submits: a full store's 503 is tested in core, not a finding here.
  const svc = new Service('fuzz_target', { tasks: { maxTasks: 4096, resultTtl: 60 } });
  svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor(), task: true }, function json(v) {
    return v;
  });
  svc.api({ input: new Text(), output: new Text() }, function text(v: string) {
    return v;
  });
  svc.api({ input: new File(), output: new File() }, function file(f: FileInput) {
    return f.bytes;
  });
  svc.api({ input: new File({ mime_type: 'text/csv' }), output: new JSONDescriptor() }, function file_csv(f) {
    return { filename: f.filename, size: f.bytes.length };
  });
  svc.api({ input: new NumpyNdarray(), output: new NumpyNdarray() }, function nd(v: NDArray) {
    return v;
  });
  svc.api(
    {
      input: new NumpyNdarray({ dtype: 'float32', shape: [2, 2], enforce_shape: true, enforce_dtype: true }),
      output: new NumpyNdarray(),
    },
    function nd_strict(v: NDArray) {
      return v;
    },
  );
  svc.api(
    {
      input: new Multipart({ meta: new JSONDescriptor(), doc: new File(), note: new Text() }),
      output: new JSONDescriptor(),
    },
    function multipart(v) {
      return { meta: v.meta, note: v.note, doc: v.doc.filename };
    },
  );
  svc.api({ input: new PandasSeries(), output: new PandasSeries() }, function series(s: Series) {
    return s;
  });
  svc.api({ input: new PandasDataFrame(), output: new PandasDataFrame() }, function frame(df: DataFrame) {
    return df;
  });
  svc.api(
    { input: new PandasDataFrame(), output: new PandasDataFrame({ default_format: 'parquet' }) },
    function frame_parquet(df: DataFrame) {
      return df;
    },
  );
  svc.api(
    { input: new PandasDataFrame(), output: new PandasDataFrame({ default_format: 'csv' }) },
    function frame_csv(df: DataFrame) {
      return df;
    },
  );
  svc.api({ input: new Image(), output: new Image() }, function image(img) {
    return img;
  });
  return svc;
}

/** The API paths, by the body family that suits each. */
export const API_FAMILIES = {
  '/json': 'json',
  '/json/submit': 'json',
  '/text': 'text',
  '/file': 'bytes',
  '/file_csv': 'csv',
  '/nd': 'json',
  '/nd_strict': 'json',
  '/multipart': 'multipart',
  '/series': 'json',
  '/frame': 'table',
  '/frame_parquet': 'table',
  '/frame_csv': 'table',
  '/image': 'image',
} as const;
export type BodyFamily = (typeof API_FAMILIES)[keyof typeof API_FAMILIES];
