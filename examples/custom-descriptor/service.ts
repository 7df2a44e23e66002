import { Service } from '@tiffin/core';
import { CsvRows, type Rows } from './src/csv-rows.js';

/** Chained and named, so that `typeof svc` lists the API for the typed client (`@tiffin/client`). */
const svc = new Service('csv_rows').api(
  // Sum of each row; batchable: concurrent requests are summed in one call.
  {
    name: 'row_sums',
    input: new CsvRows(),
    output: new CsvRows(),
    batchable: true,
    max_batch_size: 64,
    max_latency_ms: 20,
  },
  function row_sums(rows: Rows): Rows {
    return rows.map((row) => [row.reduce((a, b) => a + b, 0)]);
  },
);

export default svc;
