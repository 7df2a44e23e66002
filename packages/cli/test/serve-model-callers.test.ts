import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  embeddingExpected,
  writeEmbedding,
  writeFill,
  writeWiden,
} from '../../onnx/test/fixtures/test-models.js';
import { ModelServers, postJson } from './model-servers.js';

/*
 * What one caller of a zero-code model (`tiffin serve model.onnx`, a real server process) can cost the others:
 * every test sends one hostile request among honest ones and checks that the honest ones are answered, that
 * `/livez` keeps answering, and that the server's memory stays bounded.
 */

const servers = new ModelServers();

beforeAll(() => servers.open('tiffin-callers-'));
afterAll(() => servers.close());

/** The server process's resident memory in MB (Linux). */
function rssMb(pid: number | undefined): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(line?.[1] ?? 0) / 1024;
}

/** `/livez` probes, one after another, until `done` settles: how many there were and how many answered 200. */
async function probeWhile(url: string, done: Promise<unknown>): Promise<{ sent: number; ok: number }> {
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  const counts = { sent: 0, ok: 0 };
  while (!finished) {
    counts.sent++;
    if ((await fetch(`${url}/livez`)).status === 200) counts.ok++;
  }
  return counts;
}

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

  it('reads a large JSON body in a worker thread while /livez answers, and runs it alone past the batch cap', async () => {
    // 2.4 MB (a JSON thread takes bodies from 1 MiB); the 32 MiB the server accepts reads the same way, slower.
    const body = `[${new Array(300_000).fill('[1,2,3]').join(',')}]`;
    const big = postJson(`${url}/predict`, body);
    const probes = await probeWhile(url, big);
    // 300,000 rows are more than one batch holds: the request runs as a batch of its own (3.6 M values answered).
    expect((await big).status).toBe(200);
    expect(probes.ok).toBe(probes.sent);
    expect((await postJson(`${url}/predict`, [[1, 2, 3]])).status).toBe(200);
  }, 60_000);

  it('reads a large Open Inference Protocol JSON body in a worker thread while /livez answers', async () => {
    // 2.4 MB of JSON whose data does not fit its shape: refused with 400 after the parse, in a JSON thread.
    const data = new Array(900_000).fill(1);
    const body = JSON.stringify({ inputs: [{ name: 'ids', datatype: 'INT64', shape: [1, 3], data }] });
    const big = postJson(`${url}/v2/models/embedding/infer`, body);
    const probes = await probeWhile(url, big);
    expect((await big).status).toBe(400);
    expect(probes.ok).toBe(probes.sent);
    const small = await postJson(`${url}/v2/models/embedding/infer`, {
      inputs: [{ name: 'ids', datatype: 'INT64', shape: [1, 3], data: [1, 2, 3] }],
    });
    expect(small.status).toBe(200);
  }, 60_000);
});

describe('answers whose size a request decides are bounded before they are encoded', () => {
  let widen: string;
  let widenPid: number | undefined;
  let fill: string;
  beforeAll(async () => {
    const at = servers.processes.length;
    [widen, fill] = await Promise.all([
      servers.serve([writeWiden(servers.dir, 64), '--no-batching']),
      servers.serve([writeFill(servers.dir)]),
    ]);
    widenPid = servers.processes[at]!.child.pid;
  }, 60_000);

  it('refuses a ×64 answer past maxAnswerElements with 422 ANSWER_TOO_LARGE, and sends a large one off the event loop', async () => {
    const before = rssMb(widenPid);
    // 80,000 values (~0.6 MB of JSON) that become 5.1 M: over the 4,194,304 an answer may hold.
    const big = JSON.stringify([Array.from({ length: 80_000 }, (_, i) => (i % 100) / 8)]);
    const refused = postJson(`${widen}/predict`, big);
    const probes = await probeWhile(widen, refused);
    expect((await refused).status).toBe(422);
    expect((await refused).json.code).toBe('ANSWER_TOO_LARGE');
    expect(probes.ok).toBe(probes.sent);
    // 20,000 values become 1.28 M (some 6 MB of JSON), written in a worker thread while /livez answers.
    const large = postJson(`${widen}/predict`, [Array.from({ length: 20_000 }, (_, i) => (i % 100) / 8)]);
    const during = await probeWhile(widen, large);
    const answer = await large;
    expect(answer.status).toBe(200);
    expect((answer.json as unknown as number[][])[0]!.length).toBe(1_280_000);
    expect(during.ok).toBe(during.sent);
    expect(rssMb(widenPid) - before).toBeLessThan(600);
  }, 60_000);

  it('bounds an answer whose size is an input value (zeros of the shape sent)', async () => {
    const small = await postJson(`${fill}/predict`, [2, 3]);
    expect(small).toEqual({
      status: 200,
      json: [
        [0, 0, 0],
        [0, 0, 0],
      ],
    });
    const refused = await postJson(`${fill}/predict`, [4096, 4096]);
    expect(refused.status).toBe(422);
    expect(refused.json.code).toBe('ANSWER_TOO_LARGE');
    expect((await postJson(`${fill}/predict`, [1, 2])).status).toBe(200);
  }, 60_000);
});
