/**
 * Quickstart service: an iris species classifier (a trained ONNX model, model/iris.onnx, run by @tiffin/onnx in
 * worker threads) and a sentiment model (naive Bayes trained at startup from a small embedded corpus), served
 * over several IO descriptors.
 *
 *   npm start             # (repository root) serves this file on http://127.0.0.1:3000 (API page at /)
 */
import {
  BadInput,
  File,
  JSONDescriptor,
  Multipart,
  NDArray,
  NumpyNdarray,
  Service,
  Text,
  topK,
} from '@tiffin/core';
import { FEATURES, IRIS_INSTANCES, IrisClassifier, SPECIES } from './src/iris-model.js';
import { NaiveBayesSentiment } from './src/sentiment.js';

export interface Models {
  iris: IrisClassifier;
  sentiment: NaiveBayesSentiment;
}

const base = new Service('quickstart', {
  version: '1.0.0',
  doc: 'An iris classifier (a trained ONNX model) and a sentiment model.',
});

base.onStartup(async ({ state }) => {
  const models: Models = { iris: await IrisClassifier.load(), sentiment: new NaiveBayesSentiment() };
  state.models = models;
});
base.onShutdown(async ({ state }) => {
  await (state.models as Models | undefined)?.iris.close();
});

const models = (state: Record<string, unknown>) => state.models as Models;

/** The APIs, chained so that `typeof svc` lists them for the typed client (`@tiffin/client`). */
const svc = base
  /** Rows of 4 measurements (cm) in, the species index of each row out; concurrent requests run as one batch. */
  .api(
    {
      name: 'classify',
      input: new NumpyNdarray({ dtype: 'float32', shape: [-1, 4], enforce_shape: true }),
      output: new NumpyNdarray({ dtype: 'int64' }),
      example: [[5.1, 3.5, 1.4, 0.2]],
      doc: 'Species index (0 setosa, 1 versicolor, 2 virginica) of each row [sepal_length, sepal_width, petal_length, petal_width].',
      batchable: true,
      max_batch_size: 256,
      max_concurrent_batches: IRIS_INSTANCES,
    },
    async function classify(input, ctx) {
      const labels = await models(ctx.state).iris.predict(input);
      return NDArray.from(labels, 'int64');
    },
  )
  /** Named measurements in, species and class probabilities out. */
  .api(
    {
      name: 'classify_json',
      input: new JSONDescriptor(),
      output: new JSONDescriptor(),
      example: { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 },
      doc: 'One flower {"sepal_length", "sepal_width", "petal_length", "petal_width"} or a list of them.',
    },
    async function classify_json(input, ctx) {
      const { iris } = models(ctx.state);
      const flowers = Array.isArray(input) ? input : [input];
      if (flowers.length === 0) return [];
      const rows = flowers.map((flower, index) => {
        if (typeof flower !== 'object' || flower === null) {
          throw new BadInput(`Item ${index} must be an object with ${FEATURES.join(', ')}`);
        }
        const record = flower as Record<string, unknown>;
        return FEATURES.map((name) => {
          const value = record[name];
          if (typeof value !== 'number' || !Number.isFinite(value)) {
            throw new BadInput(`Item ${index}: '${name}' must be a number (cm)`);
          }
          return value;
        });
      });
      const ranked = topK(await iris.probabilities(IrisClassifier.rows(rows)), SPECIES, {
        k: SPECIES.length,
      });
      const results = ranked.map((classes) => ({
        species: classes[0]!.label,
        probabilities: Object.fromEntries(
          SPECIES.map((s, i) => [s, Number(classes.find((c) => c.index === i)!.score.toFixed(4))]),
        ),
      }));
      return Array.isArray(input) ? results : results[0];
    },
  )
  /** A review in, "positive" or "negative" out. */
  .api(
    {
      name: 'sentiment',
      input: new Text(),
      output: new Text(),
      example: 'a wonderful film',
      doc: 'Sentiment of an English review: positive or negative.',
    },
    function sentiment(input, ctx) {
      return models(ctx.state).sentiment.predict(input);
    },
  )
  /** A CSV file of measurements in (header row + 4 numeric columns), the same CSV with a species column out. */
  .api(
    {
      name: 'classify_csv',
      input: new File({ mime_type: 'text/csv' }),
      output: new File({ mime_type: 'text/csv' }),
      example: 'sepal_length,sepal_width,petal_length,petal_width\n5.1,3.5,1.4,0.2\n6.7,3.0,5.2,2.3\n',
      doc: 'Upload a CSV with columns sepal_length,sepal_width,petal_length,petal_width; get it back with a species column.',
    },
    async function classify_csv(file, ctx) {
      const { iris } = models(ctx.state);
      const lines = file.bytes
        .toString('utf8')
        .split(/\r?\n/)
        .filter((l) => l.trim() !== '');
      if (lines.length === 0) throw new BadInput('The CSV file is empty');
      const [header, ...rows] = lines;
      const cells = rows.map((line, i) => {
        const row = line.split(',').map((c) => Number(c.trim()));
        if (row.length !== 4 || row.some((c) => !Number.isFinite(c))) {
          throw new BadInput(`CSV row ${i + 2}: expected 4 numbers, got '${line}'`);
        }
        return row;
      });
      const species = cells.length ? await iris.predict(IrisClassifier.rows(cells)) : [];
      const out = [`${header},species`, ...rows.map((line, i) => `${line},${SPECIES[species[i]!]}`)];
      return Buffer.from(`${out.join('\n')}\n`, 'utf8');
    },
  )
  /** Both models at once: a multipart form with measurements (JSON array) and a review (text). */
  .api(
    {
      name: 'analyze',
      input: new Multipart({
        measurements: new NumpyNdarray({ dtype: 'float32', shape: [-1, 4], enforce_shape: true }),
        review: new Text(),
      }),
      output: new JSONDescriptor(),
      example: { measurements: [[5.1, 3.5, 1.4, 0.2]], review: 'a wonderful film' },
      doc: 'Multipart form: part `measurements` (JSON rows of 4 numbers) and part `review` (text).',
    },
    async function analyze({ measurements, review }, ctx) {
      const { iris, sentiment } = models(ctx.state);
      const species = measurements.shape[0] ? (await iris.predict(measurements)).map((i) => SPECIES[i]!) : [];
      return { species, sentiment: sentiment.predict(review), scores: sentiment.scores(review) };
    },
  );

export default svc;
