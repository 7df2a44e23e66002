import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NDArray, type ServerHandle, serve, silentLogger } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type svc from '../../../examples/quickstart/service.js';
import { createClient, isTiffinClientError, TiffinClientError } from '../src/index.js';

// The service is loaded at run time only by the server; the client sees its type alone.
let server: ServerHandle;
let dir: string;
beforeAll(async () => {
  const { default: service } = await import('../../../examples/quickstart/service.js');
  server = await serve(service, { port: 0, host: '127.0.0.1', handleSignals: false, logger: silentLogger });
  dir = await mkdtemp(join(tmpdir(), 'tiffin-client-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('@tiffin/client against the quickstart', () => {
  it('calls the NumpyNdarray API with nested arrays, a typed array and an NDArray', async () => {
    const client = createClient<typeof svc>({ baseUrl: server.url });
    const rows = [
      [5.1, 3.5, 1.4, 0.2],
      [6.7, 3.0, 5.2, 2.3],
    ];
    expect(await client.classify(rows)).toEqual([0, 2]);
    expect(await client.classify(NDArray.from(rows, 'float64'))).toEqual([0, 2]);
    // A flat typed array is reshaped by the API's shape [-1, 4].
    expect(await client.classify(new Float64Array(rows.flat()))).toEqual([0, 2]);
  });

  it('calls the JSON, Text, File and Multipart APIs', async () => {
    const client = createClient<typeof svc>({ baseUrl: server.url });
    const flower = { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 };
    expect(await client.classify_json(flower)).toMatchObject({ species: 'setosa' });
    expect(await client.sentiment('a wonderful, delightful film')).toBe('positive');

    const csv = 'sepal_length,sepal_width,petal_length,petal_width\n5.1,3.5,1.4,0.2\n';
    const fromBytes = await client.classify_csv(new Blob([csv], { type: 'text/csv' }));
    expect(fromBytes.type).toBe('text/csv');
    expect(await fromBytes.text()).toBe(`${csv.split('\n')[0]},species\n5.1,3.5,1.4,0.2,setosa\n`);
    const path = join(dir, 'flowers.csv');
    await writeFile(path, csv);
    expect(await (await client.classify_csv(path)).text()).toContain('setosa');
    expect(await (await client.classify_csv(new TextEncoder().encode(csv))).text()).toContain('setosa');

    const both = await client.analyze({ measurements: [[6.7, 3.0, 5.2, 2.3]], review: 'a wonderful film' });
    expect(both).toMatchObject({ species: ['virginica'], sentiment: 'positive' });
  });

  it('throws typed errors carrying the server type and message', async () => {
    const client = createClient<typeof svc>({ baseUrl: server.url });
    const err = await client.classify([1, 2, 3]).catch((e: unknown) => e);
    expect(isTiffinClientError(err)).toBe(true);
    expect(err).toBeInstanceOf(TiffinClientError);
    const e = err as TiffinClientError;
    expect(e.kind).toBe('http');
    expect(e.status).toBe(400);
    expect(e.type).toBe('BadInput');
    expect(e.code).toBe('BAD_INPUT');
    expect(e.message).toMatch(/shape/);
  });

  it('works untyped from /docs.json', async () => {
    const client = createClient({ baseUrl: server.url });
    const apis = await client.$apis();
    expect([...apis.keys()].sort()).toEqual([
      'analyze',
      'classify',
      'classify_csv',
      'classify_json',
      'sentiment',
    ]);
    expect(apis.get('classify')).toMatchObject({
      route: '/classify',
      input: { form: 'ndarray-json', shape: [-1, 4] },
    });
    expect(await client.sentiment('terrible, boring and awful')).toBe('negative');
    expect(await client.$call('classify', [[5.9, 3.0, 4.2, 1.5]])).toEqual([1]);
    await expect(client.nope('x')).rejects.toMatchObject({ kind: 'usage', message: /No API named 'nope'/ });
    // Awaiting the client gives the client (it is not a thenable).
    expect(await client).toBe(client);
  });
});

describe('@tiffin/client with a bearer token (the server requires one)', () => {
  it('sends the token; without it the 401 carries the server type and code', async () => {
    const { default: service } = await import('../../../examples/quickstart/service.js');
    const guarded = await serve(service, {
      port: 0,
      host: '127.0.0.1',
      handleSignals: false,
      logger: silentLogger,
      apiToken: 'tok-123',
    });
    try {
      const client = createClient<typeof svc>({ baseUrl: guarded.url, token: 'tok-123' });
      expect(await client.sentiment('a wonderful film')).toBe('positive');
      const anonymous = createClient<typeof svc>({ baseUrl: guarded.url });
      await expect(anonymous.sentiment('x')).rejects.toMatchObject({
        kind: 'http',
        status: 401,
        code: expect.any(String),
      });
      // The v2 probes stay open, as /livez and /readyz do.
      expect((await fetch(`${guarded.url}/v2/health/ready`)).status).toBe(200);
      expect((await fetch(`${guarded.url}/v2/models/classify`)).status).toBe(401);
    } finally {
      await guarded.close();
    }
  });
});
