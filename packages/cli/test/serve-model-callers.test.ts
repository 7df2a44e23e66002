import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddingExpected, writeEmbedding } from '../../onnx/test/fixtures/test-models.js';
import { ModelServers, postJson } from './model-servers.js';

/*
 * What one caller of a zero-code model (`tiffin serve model.onnx`, a real server process) can cost the others:
 * every test sends one hostile request among honest ones and checks that the honest ones are answered, that
 * `/livez` keeps answering, and that the server's memory stays bounded.
 */

const servers = new ModelServers();

beforeAll(() => servers.open('tiffin-callers-'));
afterAll(() => servers.close());

describe('a batched model: one caller’s bad value fails that caller only', () => {
  let url: string;
  beforeAll(async () => {
    // A long wait lets every request of the wave join one batch with the bad one.
    url = await servers.serve([
      writeEmbedding(servers.dir),
      '--max-batch-size',
      '64',
      '--max-latency-ms',
      '2000',
    ]);
  }, 60_000);

  it('answers the 49 honest requests batched with an out-of-range token id, and fails that one alone', async () => {
    const ids = (i: number) => [[i % 16, (i + 1) % 16, (i + 2) % 16]];
    const honest = Array.from({ length: 49 }, (_, i) => postJson(`${url}/predict`, ids(i)));
    const bad = postJson(`${url}/predict`, [[1, 2, 1_000_000]]);
    const answers = await Promise.all(honest);
    for (const [i, a] of answers.entries()) {
      expect(a.status).toBe(200);
      const want = embeddingExpected(ids(i));
      expect((a.json as unknown as number[][][])[0]![2]![3]).toBeCloseTo(want[0]![2]![3]!, 5);
    }
    const refused = await bad;
    expect(refused.status).toBe(500);
    expect(refused.json.code).toBe('MODEL_RUN_FAILED');
    expect((await fetch(`${url}/livez`)).status).toBe(200);
  });
});
