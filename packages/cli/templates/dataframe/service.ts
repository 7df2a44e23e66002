import { Service } from '@tiffin/core';
import { loadDanfo, PandasDataFrame } from '@tiffin/io-pandas';

const dfd = await loadDanfo(); // the danfojs-node the descriptors hand your API

/** The APIs are chained so that `typeof svc` lists them for the typed client (see client.ts). */
const svc = new Service('dataframe', { doc: 'Order totals from a table of orders.' }).api(
  {
    name: 'totals',
    // Rows like {"item": "tea", "price": 2.5, "quantity": 4}; 3 columns, and values that convert, or a 400.
    input: new PandasDataFrame({
      orient: 'records',
      dtype: { item: 'str', price: 'float64', quantity: 'int64' },
      enforce_dtype: true,
      shape: [-1, 3],
      enforce_shape: true,
    }),
    output: new PandasDataFrame({ orient: 'records' }),
    doc: 'Each row with its total (price × quantity).',
  },
  (orders) =>
    new dfd.DataFrame({
      item: orders.column('item').values,
      total: orders.column('price').mul(orders.column('quantity')).values,
    }),
);

export default svc;
