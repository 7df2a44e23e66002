import { type ServerHandle, Service, serve } from '@tiffin/core';
import { afterAll, describe, expect, it } from 'vitest';
import { loadedDanfo } from '../src/danfo/load.js';
import { frameToParquet } from '../src/formats/parquet.js';
import { type DataFrame, PandasDataFrame } from '../src/index.js';

/*
 * danfo takes about a second to import (tfjs, mathjs, xlsx) and the decoding threads load their modules when
 * they start: a server prepares both before it is ready, so the first table body after a start does not hold
 * `/livez` while they load.
 */

let running: ServerHandle | undefined;
afterAll(() => running?.close());

describe('table descriptors load danfo and their threads at startup', () => {
  it('has danfo imported once the server is ready, before any body, and answers the first Parquet body', async () => {
    const svc = new Service('tables');
    svc.api(
      { input: new PandasDataFrame(), output: new PandasDataFrame({ orient: 'records' }) },
      async function echo(df: DataFrame) {
        return df;
      },
    );
    expect(loadedDanfo()).toBeUndefined();
    running = await serve(svc, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
    expect(loadedDanfo()).toBeDefined();
    const parquet = frameToParquet({ columns: ['a'], index: [0, 1], dtypes: ['int64'], rows: [[1], [2]] });
    const res = await fetch(`${running.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.apache.parquet' },
      body: parquet,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ a: 1 }, { a: 2 }]);
    expect((await fetch(`${running.url}/livez`)).status).toBe(200);
  }, 60_000);
});
