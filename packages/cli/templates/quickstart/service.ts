import { NDArray, NumpyNdarray, Service, Text } from '@tiffin/core';

/** The APIs are chained so that `typeof svc` lists them for the typed client (see client.ts). */
const svc = new Service('quickstart', { doc: 'A text API and a numeric-array API.' })
  .api({ name: 'shout', input: new Text(), output: new Text(), doc: 'The text, upper-cased.' }, (text) =>
    text.toUpperCase(),
  )
  .api(
    {
      name: 'row_sums',
      // Rows of 4 numbers; any other shape is answered 400 before this function runs.
      input: new NumpyNdarray({ dtype: 'float64', shape: [-1, 4], enforce_shape: true }),
      output: new NumpyNdarray({ dtype: 'float64' }),
      doc: 'The sum of each row.',
    },
    (rows) => {
      const data = rows.data as Float64Array;
      const sums: number[] = [];
      for (let i = 0; i < data.length; i += 4)
        sums.push(data[i]! + data[i + 1]! + data[i + 2]! + data[i + 3]!);
      return NDArray.from(sums, 'float64');
    },
  );

export default svc;
