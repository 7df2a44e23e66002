import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { BatchContext } from '../../src/context/context.js';
import {
  BadInput,
  File,
  inferenceClientConstructor,
  JSON as JSONDescriptor,
  NDArray,
  NumpyNdarray,
  type RequestMessage,
  type ResponseMessage,
  Service,
  serveGrpc,
  Text,
} from '../../src/index.js';
import { sleep, start } from '../server/helpers.js';

type Started = Awaited<ReturnType<typeof start>>;
let running: Started | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** A latch the test opens: the first batch waits on it, so later requests queue up behind it. */
function latch(): { wait: Promise<void>; open(): void } {
  let open = () => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(2);
}

function post(url: string, body: string, signal?: AbortSignal) {
  return fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, signal }).then(
    async (res) => ({
      status: res.status,
      headers: res.headers,
      body: globalThis.JSON.parse(await res.text()),
    }),
  );
}

/**
 * A matrix-row API that records the rows of every batch it runs: the first batch is held on a latch, so the
 * requests sent while it waits are batched together when it is opened.
 */
async function rowService(options: { max_batch_size: number; max_latency_ms?: number }) {
  const batches: number[][] = [];
  const gate = latch();
  const svc = new Service('rows');
  svc.api(
    {
      input: new NumpyNdarray({ dtype: 'float64' }),
      output: new NumpyNdarray(),
      batchable: true,
      batch_dim: 0,
      max_latency_ms: options.max_latency_ms ?? 1000,
      max_batch_size: options.max_batch_size,
    },
    async function twice(batch: NDArray, ctx: BatchContext) {
      const ids = [...(batch.data as Float64Array)].filter((_, i) => i % batch.shape[1]! === 0);
      batches.push(ids);
      if (batches.length === 1) await gate.wait;
      for (let row = 0; row < batch.shape[0]!; row++) {
        if (ids[row] === 13) ctx.failRow(row, new BadInput('row 13 is unlucky'));
      }
      const out = new Float64Array(batch.size);
      for (let i = 0; i < out.length; i++) out[i] = (batch.data as Float64Array)[i]! * 2;
      return new NDArray(out, batch.shape, 'float64');
    },
  );
  running = await start(svc);
  const url = `${running.url}/twice`;
  const batcher = running.app.runtime.batcher('twice')!;
  /** Send the first request (it runs alone and holds the function), then `bodies` behind it. */
  const queueBehindFirst = async (bodies: string[], signals: Array<AbortSignal | undefined> = []) => {
    const first = post(url, '[[0, 0]]');
    await until(() => batches.length === 1);
    const rest = bodies.map((body, i) => post(url, body, signals[i]));
    const rows = bodies.reduce((n, b) => n + (globalThis.JSON.parse(b) as unknown[]).length, 0);
    await until(() => batcher.depth === rows);
    return { first, rest };
  };
  return { batches, gate, url, batcher, queueBehindFirst };
}

describe('adaptive batching (NumpyNdarray over HTTP)', () => {
  it('merges queued requests into one call and gives each caller exactly its own rows', async () => {
    const { batches, gate, queueBehindFirst } = await rowService({ max_batch_size: 32 });
    const { first, rest } = await queueBehindFirst(['[[1, 10]]', '[[2, 20]]', '[[3, 30], [4, 40]]']);
    gate.open();
    expect((await first).body).toEqual([[0, 0]]);
    const answers = await Promise.all(rest);
    expect(answers.map((a) => a.body)).toEqual([
      [[2, 20]],
      [[4, 40]],
      [
        [6, 60],
        [8, 80],
      ],
    ]);
    expect(batches).toEqual([[0], [1, 2, 3, 4]]);
  });

  it('counts a request of k rows as k and never runs more than max_batch_size rows', async () => {
    const { batches, gate, queueBehindFirst } = await rowService({ max_batch_size: 4 });
    const bodies = [
      '[[1,1],[2,2],[3,3]]',
      '[[4,4],[5,5]]',
      '[[6,6]]',
      '[[7,7],[8,8],[9,9],[10,10]]',
      '[[11,11]]',
    ];
    const { first, rest } = await queueBehindFirst(bodies);
    gate.open();
    await first;
    const answers = await Promise.all(rest);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers[3]!.body).toEqual([
      [14, 14],
      [16, 16],
      [18, 18],
      [20, 20],
    ]);
    const after = batches.slice(1);
    for (const rows of after) expect(rows.length).toBeLessThanOrEqual(4);
    // In arrival order, never splitting a request: 3 | 2+1 | 4 | 1.
    expect(after).toEqual([[1, 2, 3], [4, 5, 6], [7, 8, 9, 10], [11]]);
  });

  it('works with max_batch_size 1: one request per call', async () => {
    const { batches, gate, queueBehindFirst } = await rowService({ max_batch_size: 1 });
    const { first, rest } = await queueBehindFirst(['[[1,1]]', '[[2,2]]', '[[3,3]]']);
    gate.open();
    await first;
    expect((await Promise.all(rest)).map((a) => a.body)).toEqual([[[2, 2]], [[4, 4]], [[6, 6]]]);
    expect(batches).toEqual([[0], [1], [2], [3]]);
  });

  it('runs a request holding more rows than max_batch_size as a batch of its own, in its turn', async () => {
    const { batches, gate, url, queueBehindFirst } = await rowService({ max_batch_size: 2 });
    const { first, rest } = await queueBehindFirst(['[[1,1]]', '[[2,2],[3,3],[4,4]]', '[[5,5]]']);
    gate.open();
    await first;
    const answers = await Promise.all(rest);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers[1]!.body).toEqual([
      [4, 4],
      [6, 6],
      [8, 8],
    ]);
    // Arrival order kept: 1 | 2+3+4 alone (over the cap) | 5.
    expect(batches).toEqual([[0], [1], [2, 3, 4], [5]]);
    const alone = await post(url, '[[6,6],[7,7],[8,8]]');
    expect([alone.status, alone.body]).toEqual([
      200,
      [
        [12, 12],
        [14, 14],
        [16, 16],
      ],
    ]);
  });

  it('a row failed with ctx.failRow fails only the caller that sent it', async () => {
    const { gate, queueBehindFirst } = await rowService({ max_batch_size: 8 });
    const { first, rest } = await queueBehindFirst(['[[12,0]]', '[[13,0]]', '[[14,0]]']);
    gate.open();
    await first;
    const [a, b, c] = await Promise.all(rest);
    expect(a).toMatchObject({ status: 200, body: [[24, 0]] });
    expect(b).toMatchObject({ status: 400, body: { error: 'row 13 is unlucky', type: 'BadInput' } });
    expect(c).toMatchObject({ status: 200, body: [[28, 0]] });
  });

  it('drops callers that disconnected while queued before the batch is made', async () => {
    const { batches, gate, batcher, queueBehindFirst } = await rowService({ max_batch_size: 8 });
    const gone = new AbortController();
    const { first, rest } = await queueBehindFirst(
      ['[[1,1]]', '[[2,2]]', '[[3,3]]'],
      [undefined, gone.signal],
    );
    gone.abort();
    await expect(rest[1]).rejects.toThrow();
    // The server saw the socket close (the request left the in-flight count); it is still queued until dispatch.
    await until(() => running!.app.lifecycle.activeRequests === 3);
    expect(batcher.depth).toBe(3);
    gate.open();
    await first;
    expect((await rest[0]).body).toEqual([[2, 2]]);
    expect((await rest[2]).body).toEqual([[6, 6]]);
    expect(batches).toEqual([[0], [1, 3]]);
  });

  it('sheds load with 503 and Retry-After once the queue cannot start within max_latency_ms', async () => {
    const svc = new Service('slow');
    svc.api(
      {
        input: new JSONDescriptor(),
        output: new JSONDescriptor(),
        batchable: true,
        max_batch_size: 1,
        max_latency_ms: 40,
      },
      async function slow(items: unknown[]) {
        await sleep(30);
        return items;
      },
    );
    running = await start(svc);
    const url = `${running.url}/slow`;
    // Learn the cost: three batches one after another.
    for (let i = 0; i < 3; i++) expect((await post(url, '[1]')).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(url, '[1]')));
    const shed = answers.filter((a) => a.status === 503);
    expect(shed.length).toBeGreaterThan(0);
    expect(shed[0]!.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect(shed[0]!.body).toMatchObject({ type: 'ServiceUnavailable', code: 'BATCH_QUEUE_FULL' });
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    expect(metrics).toMatch(
      /tiffin_api_server_batch_shed_total\{api_name="slow",service_name="slow"\} [1-9]/,
    );
  });
});

describe('a batch whose function throws', () => {
  it('answers every caller with the error when the function fails for each of them (the batch is retried in halves)', async () => {
    const gate = latch();
    let calls = 0;
    const svc = new Service('throws');
    svc.api(
      { input: new Text(), output: new Text(), batchable: true, max_batch_size: 8, max_latency_ms: 1000 },
      async function shout(lines: string[]) {
        calls++;
        if (calls === 1) {
          await gate.wait;
          return lines.map((l) => l.toUpperCase());
        }
        throw new BadInput(`cannot shout ${lines.length} lines`);
      },
    );
    running = await start(svc);
    const url = `${running.url}/shout`;
    const send = (body: string) =>
      fetch(url, { method: 'POST', body }).then(async (r) => [r.status, await r.text()]);
    const first = send('a');
    await until(() => calls === 1);
    const rest = [send('b'), send('c'), send('d')];
    await until(() => running!.app.runtime.batcher('shout')!.depth === 3);
    gate.open();
    expect(await first).toEqual([200, 'A']);
    for (const [status, body] of await Promise.all(rest)) {
      expect(status).toBe(400);
      expect(globalThis.JSON.parse(body as string)).toMatchObject({
        error: 'cannot shout 1 lines',
        type: 'BadInput',
      });
    }
  });
});

describe('batching and the rest of the service', () => {
  it('JSON: each request sends an array of items; a non-array is a 400', async () => {
    const svc = new Service('items');
    svc.api(
      { input: new JSONDescriptor(), output: new JSONDescriptor(), batchable: true },
      function lengths(items: unknown[]) {
        return items.map((item) => String(item).length);
      },
    );
    running = await start(svc);
    const url = `${running.url}/lengths`;
    expect((await post(url, '["a", "bbb"]')).body).toEqual([1, 3]);
    const bad = await post(url, '{"a": 1}');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('JSON array');
  });

  it('shows batching in /docs.json and batch metrics in /metrics', async () => {
    const svc = new Service('shown');
    svc.api(
      { input: new Text(), output: new Text(), batchable: true, max_batch_size: 4, max_latency_ms: 50 },
      function upper(lines: string[]) {
        return lines.map((l) => l.toUpperCase());
      },
    );
    running = await start(svc);
    const doc = (await (await fetch(`${running.url}/docs.json`)).json()) as {
      paths: Record<string, { post: Record<string, unknown> }>;
    };
    expect(doc.paths['/upper'].post['x-tiffin-batching']).toEqual({
      batchable: true,
      batch_dim: 0,
      max_batch_size: 4,
      max_latency_ms: 50,
    });
    expect(await (await fetch(`${running.url}/upper`, { method: 'POST', body: 'x' })).text()).toBe('X');
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    expect(metrics).toContain(
      'tiffin_api_server_batch_size_bucket{le="1",api_name="upper",service_name="shown"} 1',
    );
    expect(metrics).toContain('tiffin_api_server_batch_queue_depth{api_name="upper",service_name="shown"} 0');
  });

  it('gRPC calls go through the same batcher as HTTP calls', async () => {
    const gate = latch();
    const batches: string[][] = [];
    const svc = new Service('both');
    svc.api(
      { input: new Text(), output: new Text(), batchable: true, max_batch_size: 8, max_latency_ms: 1000 },
      async function echo(lines: string[]) {
        batches.push(lines);
        if (batches.length === 1) await gate.wait;
        return lines.map((l) => `${l}!`);
      },
    );
    running = await start(svc);
    const rpc = await serveGrpc(svc, { port: 0, runtime: running.app.runtime, runStartupHooks: false });
    const Ctor = inferenceClientConstructor();
    const client = new Ctor(rpc.address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void): void;
    };
    try {
      const first = fetch(`${running.url}/echo`, { method: 'POST', body: 'http-1' }).then((r) => r.text());
      await until(() => batches.length === 1);
      const viaGrpc = new Promise<ResponseMessage>((resolve, reject) =>
        client.Call({ api_name: 'echo', text: { value: 'grpc' } }, (err, res) =>
          err ? reject(err) : resolve(res),
        ),
      );
      const viaHttp = fetch(`${running.url}/echo`, { method: 'POST', body: 'http-2' }).then((r) => r.text());
      await until(() => running!.app.runtime.batcher('echo')!.depth === 2);
      gate.open();
      expect(await first).toBe('http-1!');
      expect((await viaGrpc).text?.value).toBe('grpc!');
      expect(await viaHttp).toBe('http-2!');
      expect(batches[1]!.sort()).toEqual(['grpc', 'http-2']);
    } finally {
      client.close();
      await rpc.close();
    }
  });

  it('refuses a batchable API whose descriptors cannot batch, or bad settings, at registration', () => {
    const svc = new Service('refused');
    expect(() =>
      svc.api({ input: new File(), output: new Text(), batchable: true }, function f() {
        return [];
      }),
    ).toThrow(/input descriptor File cannot batch/);
    expect(() =>
      svc.api(
        { input: new Text(), output: new Text(), batchable: true, max_batch_size: 0 },
        function g(x: string[]) {
          return x;
        },
      ),
    ).toThrow(/max_batch_size must be an integer >= 1/);
  });
});
