import { type IncomingHttpHeaders, request } from 'node:http';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService, type DiffusionService } from '../../src/service/diffusion-service.js';
import { tinyDir } from '../helpers/tiny.js';
import { waitFor } from './compat-helpers.js';

/**
 * The kinds' own queues (`concurrency`, `queue`: `tiffin diffusion start --concurrency --queue`) govern the
 * A1111 and OpenAI routes too: their requests wait in the queue of the kind they run (txt2img in text2img's),
 * beside the native API's calls, ordered by `Priority` and then arrival, and past the bound they are refused with
 * the 503 `API_QUEUE_FULL` and its `Retry-After` (docs/diffusion-service.md, queues).
 */
let sd: DiffusionService;
let handle: ServerHandle;

beforeAll(async () => {
  sd = createDiffusionService({
    modelDir: tinyDir('sd1'),
    backend: 'wasm',
    logger: new MemoryLogger(),
    concurrency: 1,
    queue: 2,
  });
  handle = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 180_000);

afterAll(async () => {
  await handle?.close();
}, 60_000);

/** A POST from the loopback address `from`: each client its own address, so the queue's client share is not hit. */
function post(
  from: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: handle.port,
        path,
        method: 'POST',
        localAddress: from,
        agent: false,
        signal,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function depth(api: string): Promise<number> {
  const text = await (await fetch(`${handle.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('tiffin_api_server_queue_depth{') && l.includes(`api_name="${api}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('the compatible routes in the kind queues', () => {
  it('wait in text2img’s queue by Priority beside native calls, and past its bound get 503 API_QUEUE_FULL', async () => {
    // Minutes of work on the tiny model: it holds the one slot until it is aborted.
    const holder = new AbortController();
    const long = post(
      '127.0.0.1',
      '/sdapi/v1/txt2img',
      { prompt: 'long', steps: 150, n_iter: 16, batch_size: 2, width: 32, height: 32, seed: 1 },
      {},
      holder.signal,
    ).catch(() => undefined);
    // Generating: it took text2img's one slot before it reached the generator.
    await waitFor(() => sd.queue.size.running === 1);
    const finished: string[] = [];
    const small = { steps: 1, width: 8, height: 8, seed: 2 };
    // Queued: an A1111 request of the lowest urgency, then a native call of the highest.
    const low = post('127.0.0.2', '/sdapi/v1/txt2img', { prompt: 'low', ...small }, { priority: 'u=7' }).then(
      (r) => {
        finished.push('a1111 u=7');
        return r;
      },
    );
    await waitFor(async () => (await depth('text2img')) === 1);
    const high = post(
      '127.0.0.3',
      '/text2img',
      { prompt: 'high', num_inference_steps: 1, height: 8, width: 8, seed: 3 },
      { priority: 'u=0' },
    ).then((r) => {
      finished.push('native u=0');
      return r;
    });
    await waitFor(async () => (await depth('text2img')) === 2);

    // The queue holds 2: the next A1111 request is refused at once, in A1111's error shape.
    const refused = await post('127.0.0.4', '/sdapi/v1/txt2img', { prompt: 'refused', ...small });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((JSON.parse(refused.text) as { error: string }).error).toBe('API_QUEUE_FULL');
    // And an OpenAI one the same way, in OpenAI's.
    const openai = await post('127.0.0.5', '/v1/images/generations', { prompt: 'refused' });
    expect(openai.status).toBe(503);
    expect(openai.headers['retry-after']).toBeDefined();

    holder.abort();
    await long;
    expect((await high).status).toBe(200);
    expect((await low).status).toBe(200);
    expect(finished).toEqual(['native u=0', 'a1111 u=7']);
  }, 300_000);
});
