import { afterEach, describe, expect, it } from 'vitest';
import { type LoadedModel, modelService, NDArray } from '../../src/index.js';
import type { ModelSignature } from '../../src/internal.js';
import type { NamedTensors } from '../../src/signature/named-tensors.js';
import { start } from '../server/helpers.js';

type Started = Awaited<ReturnType<typeof start>>;
let running: Started | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** A model computed in this thread: sum = a + b (float32), count = n + 1 (int64); each call takes `delayMs`. */
function adder(signature: Partial<ModelSignature> = {}, instances = 1, delayMs = 0) {
  const calls: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const model: LoadedModel = {
    name: 'adder',
    tag: undefined,
    module: 'test',
    classes: undefined,
    metadata: {},
    instances,
    signature: {
      inputs: [
        { name: 'a', dtype: 'float32', shape: [-1, 2] },
        { name: 'b', dtype: 'float32', shape: [-1, 2] },
        { name: 'n', dtype: 'int64', shape: [-1] },
      ],
      outputs: [
        { name: 'sum', dtype: 'float32', shape: [-1, 2] },
        { name: 'count', dtype: 'int64', shape: [-1] },
      ],
      batchable: true,
      batch_dim: 0,
      ...signature,
    },
    async run(inputs: NamedTensors) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      calls.push(inputs.a!.shape[0]!);
      await new Promise((r) => setTimeout(r, delayMs));
      inFlight--;
      const a = inputs.a!.data as Float32Array;
      const b = inputs.b!.data as Float32Array;
      const n = inputs.n!.data as BigInt64Array;
      return {
        sum: new NDArray(
          a.map((v, i) => v + b[i]!),
          inputs.a!.shape,
          'float32',
        ),
        count: new NDArray(
          n.map((v) => v + 1n),
          inputs.n!.shape,
          'int64',
        ),
      };
    },
    close: async () => {},
  };
  return { model, calls, maxInFlight: () => maxInFlight };
}

const body = (i: number) => JSON.stringify({ a: [[i, 1]], b: [[1, i]], n: [i] });

describe('modelService: a service around a loaded model', () => {
  it('answers /predict with named tensors and hands batches to every idle instance at once', async () => {
    const { model, calls, maxInFlight } = adder({}, 2, 30);
    running = await start(modelService(model, { batching: { max_batch_size: 4, max_latency_ms: 1000 } }));
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        fetch(`${running!.url}/predict`, { method: 'POST', body: body(i) }).then((r) => r.json()),
      ),
    );
    answers.forEach((a, i) => {
      expect(a).toEqual({ sum: [[i + 1, i + 1]], count: [i + 1] });
    });
    expect(Math.max(...calls)).toBeGreaterThan(1);
    expect(maxInFlight()).toBe(2);
  });

  it('one batch at a time for one instance; not batchable → one call per request', async () => {
    const one = adder({}, 1, 20);
    running = await start(modelService(one.model, { batching: { max_batch_size: 4, max_latency_ms: 1000 } }));
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        fetch(`${running!.url}/predict`, { method: 'POST', body: body(i) }),
      ),
    );
    expect(one.maxInFlight()).toBe(1);
    await running.close();
    const single = adder({ batchable: false }, 1, 0);
    running = await start(modelService(single.model));
    await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        fetch(`${running!.url}/predict`, { method: 'POST', body: body(i) }),
      ),
    );
    expect(single.calls).toEqual([1, 1, 1, 1]);
  });

  it('a one-input model given a JSON object of named tensors says which form /predict takes, not "got object"', async () => {
    const { model } = adder({
      inputs: [{ name: 'a', dtype: 'float32', shape: [-1, 2] }],
      outputs: [{ name: 'sum', dtype: 'float32', shape: [-1, 2] }],
    });
    running = await start(modelService({ ...model, run: async (inputs) => ({ sum: inputs.a! }) }));
    const res = await fetch(`${running.url}/predict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a": [[1, 2]]}',
    });
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { error: string; code: string };
    expect(answer.code).toBe('TENSOR_DTYPE_MISMATCH');
    expect(answer.error).toContain(
      "takes its input 'a' (float32 (-1, 2)) as the body itself, a nested list such as [[0,0]]",
    );
    expect(answer.error).not.toContain('got object');
  });

  it('names the service after the model and serves its signature on the protocol metadata route', async () => {
    const { model } = adder();
    const svc = modelService({ ...model, name: 'My Adder v2' });
    expect(svc.name).toBe('my-adder-v2');
    running = await start(svc);
    const meta = (await (await fetch(`${running.url}/v2/models/My%20Adder%20v2`)).json()) as Record<
      string,
      unknown
    >;
    expect(meta.inputs).toEqual([
      { name: 'a', datatype: 'FP32', shape: [-1, 2] },
      { name: 'b', datatype: 'FP32', shape: [-1, 2] },
      { name: 'n', datatype: 'INT64', shape: [-1] },
    ]);
  });
});

describe('modelService: readiness follows the runners', () => {
  it('answers /readyz 503 while the model has no runner left, and /livez 200', async () => {
    const { model } = adder({}, 1);
    let reason: string | null = null;
    running = await start(modelService({ ...model, health: () => reason }));
    expect((await fetch(`${running.url}/readyz`)).status).toBe(200);
    reason = "model 'adder' has no runner left";
    expect((await fetch(`${running.url}/readyz`)).status).toBe(503);
    expect((await fetch(`${running.url}/livez`)).status).toBe(200);
  });
});
