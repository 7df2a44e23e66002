import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { type ServerHandle, serve, silentLogger } from '@tiffin/core';
import type { OpenAPI } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import svc from '../service.js';
import { SPECIES } from '../src/iris-model.js';

/** Fisher's 150 rows (model/iris.csv): measurements and the species index. */
const IRIS = readFileSync(new URL('../model/iris.csv', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => {
    const cells = line.split(',');
    return { x: cells.slice(0, 4).map(Number), y: SPECIES.indexOf(cells[4]!) };
  });

let server: ServerHandle;
beforeAll(async () => {
  server = await serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: silentLogger });
});
afterAll(async () => {
  await server.close();
});

const post = (path: string, body: string, contentType: string) =>
  fetch(server.url + path, { method: 'POST', body, headers: { 'content-type': contentType } });

describe('quickstart service', () => {
  it('serves a /docs.json that validates as OpenAPI 3', async () => {
    const res = await fetch(`${server.url}/docs.json`);
    const doc = (await res.json()) as OpenAPI.Document;
    await expect(SwaggerParser.validate(doc)).resolves.toBeTruthy();
  });

  it('classifies rows of measurements through NumpyNdarray', async () => {
    const res = await post(
      '/classify',
      '[[5.1,3.5,1.4,0.2],[5.9,3.0,4.2,1.5],[6.7,3.0,5.2,2.3]]',
      'application/json',
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([0, 1, 2]);
  });

  it('serves the trained ONNX model: accurate on the rows held out from training, not a constant', async () => {
    const res = await post('/classify', JSON.stringify(IRIS.map((r) => r.x)), 'application/json');
    const predicted = (await res.json()) as number[];
    const accuracy = (rows: number[]) => rows.filter((i) => predicted[i] === IRIS[i]!.y).length / rows.length;
    const all = IRIS.map((_, i) => i);
    // train-iris.ts held out every fifth row of each species.
    expect(accuracy(all.filter((i) => i % 5 === 4))).toBeGreaterThanOrEqual(0.9);
    expect(accuracy(all)).toBeGreaterThanOrEqual(0.95);
    expect(new Set(predicted).size).toBe(3);
  });

  it('answers concurrent requests, batched into model calls, each with its own rows', async () => {
    const answers = await Promise.all(
      IRIS.slice(30, 70).map((r) =>
        post('/classify', JSON.stringify([r.x]), 'application/json').then((x) => x.json()),
      ),
    );
    const whole = (await (
      await post('/classify', JSON.stringify(IRIS.slice(30, 70).map((r) => r.x)), 'application/json')
    ).json()) as number[];
    expect(answers).toEqual(whole.map((label) => [label]));
  });

  it('rejects a wrongly shaped array with 400', async () => {
    const res = await post('/classify', '[1,2,3]', 'application/json');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: expect.any(String), error: expect.any(String) });
  });

  it('classifies named measurements through JSON with probabilities', async () => {
    const res = await post(
      '/classify_json',
      JSON.stringify({ sepal_length: 6.7, sepal_width: 3.0, petal_length: 5.2, petal_width: 2.3 }),
      'application/json',
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { species: string; probabilities: Record<string, number> };
    expect(body.species).toBe('virginica');
    expect(Object.keys(body.probabilities)).toEqual([...SPECIES]);
    expect(body.probabilities.virginica).toBeGreaterThan(0.5);
  });

  it('names a missing feature in a 400', async () => {
    const res = await post('/classify_json', JSON.stringify([{ sepal_length: 5 }]), 'application/json');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain("'sepal_width'");
  });

  it('tells the sentiment of a review through Text', async () => {
    const pos = await post('/sentiment', 'I love it, great quality and fast delivery', 'text/plain');
    expect(await pos.text()).toBe('positive');
    const neg = await post('/sentiment', 'poor quality, the delivery was slow and awful', 'text/plain');
    expect(await neg.text()).toBe('negative');
  });

  it('lists every API on the docs', async () => {
    const doc = (await (await fetch(`${server.url}/docs.json`)).json()) as { paths: Record<string, unknown> };
    for (const api of svc.apis.values()) expect(doc.paths[api.route]).toBeDefined();
  });
});

describe('quickstart file and multipart APIs', () => {
  it('classifies a CSV upload through File', async () => {
    const csv = 'sepal_length,sepal_width,petal_length,petal_width\n5.1,3.5,1.4,0.2\n6.7,3.0,5.2,2.3\n';
    const res = await post('/classify_csv', csv, 'text/csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/csv');
    expect(await res.text()).toBe(
      'sepal_length,sepal_width,petal_length,petal_width,species\n5.1,3.5,1.4,0.2,setosa\n6.7,3.0,5.2,2.3,virginica\n',
    );
  });

  it('accepts the CSV as a multipart file upload too', async () => {
    const form = new FormData();
    form.append('file', new Blob(['h1,h2,h3,h4\n5.9,3.0,4.2,1.5\n'], { type: 'text/csv' }), 'flowers.csv');
    const res = await fetch(`${server.url}/classify_csv`, { method: 'POST', body: form });
    expect(await res.text()).toBe('h1,h2,h3,h4,species\n5.9,3.0,4.2,1.5,versicolor\n');
  });

  it('names the bad CSV row in a 400', async () => {
    const res = await post('/classify_csv', 'a,b,c,d\n1,2,x,4\n', 'text/csv');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain('row 2');
  });

  it('runs both models on a multipart form', async () => {
    const form = new FormData();
    form.append('measurements', '[[5.1,3.5,1.4,0.2],[6.7,3.0,5.2,2.3]]');
    form.append('review', 'great quality, I love it');
    const res = await fetch(`${server.url}/analyze`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      species: string[];
      sentiment: string;
      scores: Record<string, number>;
    };
    expect(body.species).toEqual(['setosa', 'virginica']);
    expect(body.sentiment).toBe('positive');
    expect(body.scores.positive).toBeGreaterThan(0.5);
  });
});

describe('quickstart through the Open Inference Protocol (v2)', () => {
  const infer = async (model: string, inputs: unknown[]) => {
    const res = await fetch(`${server.url}/v2/models/${model}/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs }),
    });
    return { status: res.status, body: (await res.json()) as { outputs: Array<Record<string, unknown>> } };
  };

  it('classify is a model with an FP32 [-1, 4] input', async () => {
    const meta = await (await fetch(`${server.url}/v2/models/classify`)).json();
    expect(meta).toMatchObject({ inputs: [{ name: 'input', datatype: 'FP32', shape: [-1, 4] }] });
    const { status, body } = await infer('classify', [
      { name: 'input', shape: [2, 4], datatype: 'FP32', data: [5.1, 3.5, 1.4, 0.2, 6.7, 3.0, 5.2, 2.3] },
    ]);
    expect(status).toBe(200);
    expect(body.outputs).toEqual([{ name: 'output', datatype: 'INT64', shape: [2], data: [0, 2] }]);
  });

  it('classify_json and sentiment take one BYTES element', async () => {
    const flower = { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 };
    const json = await infer('classify_json', [
      { name: 'input', shape: [1], datatype: 'BYTES', data: [JSON.stringify(flower)] },
    ]);
    expect(JSON.parse((json.body.outputs[0]!.data as string[])[0]!)).toMatchObject({ species: 'setosa' });
    const text = await infer('sentiment', [
      { name: 'input', shape: [1], datatype: 'BYTES', data: ['a wonderful, moving film'] },
    ]);
    expect(text.body.outputs[0]).toMatchObject({ datatype: 'BYTES', data: ['positive'] });
  });

  it('File and Multipart APIs are not models (404)', async () => {
    expect((await fetch(`${server.url}/v2/models/classify_csv`)).status).toBe(404);
    expect((await fetch(`${server.url}/v2/models/analyze`)).status).toBe(404);
  });
});
