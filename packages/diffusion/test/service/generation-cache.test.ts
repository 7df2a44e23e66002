import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService, type DiffusionService } from '../../src/service/diffusion-service.js';
import { generationVersion, seeded } from '../../src/service/generation-cache.js';
import { tinyDir } from '../helpers/tiny.js';
import { recordProgress } from './compat-helpers.js';

/**
 * The response cache of the generation APIs (docs/diffusion-service.md, the response cache): a seeded request's
 * answer is sent again without a generation (`Tiffin-Cache: hit`), an unseeded one is never kept, `Cache-Control:
 * no-cache` generates afresh, `Accept` is part of the key, identical requests at once generate once, and the
 * compatible routes are not cached.
 */
let sd: DiffusionService;
let handle: ServerHandle;

beforeAll(async () => {
  sd = createDiffusionService({
    modelDir: tinyDir('sd1'),
    backend: 'wasm',
    logger: new MemoryLogger(),
    cache: { ttl: 60 },
  });
  handle = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 180_000);

afterAll(async () => {
  await handle?.close();
}, 60_000);

const body = (extra: Record<string, unknown> = {}) => ({
  prompt: 'a cached lighthouse',
  num_inference_steps: 2,
  height: 32,
  width: 32,
  ...extra,
});

const text2img = (payload: unknown, headers: Record<string, string> = {}) =>
  fetch(`${handle.url}/text2img`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(payload),
  });

/** Generations started while `work` runs. */
async function startedDuring(work: () => Promise<void>): Promise<number> {
  const log = recordProgress(sd);
  try {
    await work();
  } finally {
    log.stop();
  }
  return log.events.filter((e) => e.status === 'started').length;
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${handle.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes('api_name="text2img"'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('the generation APIs with cache', () => {
  it('send a seeded request again from the cache, the same bytes and seed, without a generation', async () => {
    const hitsBefore = await metric('tiffin_api_server_cache_hits_total');
    const first = await text2img(body({ seed: 7 }));
    expect(first.status).toBe(200);
    expect(first.headers.get('tiffin-cache')).toBe('miss');
    const bytes = new Uint8Array(await first.arrayBuffer());
    let again: Response | undefined;
    const started = await startedDuring(async () => {
      again = await text2img(body({ seed: 7 }));
    });
    expect(started).toBe(0);
    expect(again?.headers.get('tiffin-cache')).toBe('hit');
    expect(again?.headers.get('x-seed')).toBe('7');
    expect(again?.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(new Uint8Array(await (again as Response).arrayBuffer())).toEqual(bytes);
    expect(await metric('tiffin_api_server_cache_hits_total')).toBe(hitsBefore + 1);
  }, 120_000);

  it('generate another seed, another parameter or another Accept afresh', async () => {
    await text2img(body({ seed: 8 }));
    for (const [payload, headers] of [
      [body({ seed: 9 }), {}],
      [body({ seed: 8, guidance_scale: 3 }), {}],
      [body({ seed: 8 }), { accept: 'image/png' }],
    ] as const) {
      const answer = await text2img(payload, headers);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('tiffin-cache')).toBe('miss');
    }
  }, 120_000);

  it('never keep an unseeded request (its seed is drawn at random)', async () => {
    const started = await startedDuring(async () => {
      for (let i = 0; i < 2; i++) {
        const answer = await text2img(body());
        expect(answer.status).toBe(200);
        expect(answer.headers.get('tiffin-cache')).toBeNull();
      }
    });
    expect(started).toBe(2);
  }, 120_000);

  it('generate afresh for Cache-Control: no-cache, then serve that fresh answer', async () => {
    await text2img(body({ seed: 11 }));
    const fresh = await text2img(body({ seed: 11 }), { 'cache-control': 'no-cache' });
    expect(fresh.headers.get('tiffin-cache')).toBe('miss');
    const kept = await text2img(body({ seed: 11 }));
    expect(kept.headers.get('tiffin-cache')).toBe('hit');
  }, 120_000);

  it('generate once for identical requests that miss at the same time', async () => {
    let answers: Response[] = [];
    const started = await startedDuring(async () => {
      answers = await Promise.all([1, 2, 3].map(() => text2img(body({ seed: 21 }))));
    });
    expect(started).toBe(1);
    expect(answers.map((a) => a.headers.get('tiffin-cache')).sort()).toEqual(['hit', 'hit', 'miss']);
  }, 120_000);

  it('do not cache the compatible routes (their answers carry times and job counters of their own)', async () => {
    const a1111 = () =>
      fetch(`${handle.url}/sdapi/v1/txt2img`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'a cached lighthouse', steps: 2, width: 32, height: 32, seed: 7 }),
      });
    const started = await startedDuring(async () => {
      for (let i = 0; i < 2; i++) expect((await a1111()).headers.get('tiffin-cache')).toBeNull();
    });
    expect(started).toBe(2);
  }, 120_000);
});

describe('what the key is made of', () => {
  it('reads the seed of a JSON body or of a multipart data part', () => {
    expect(seeded({ prompt: 'x', seed: 0 })).toBe(true);
    expect(seeded({ prompt: 'x', seed: null })).toBe(false);
    expect(seeded({ img: {}, data: { seed: 3 } })).toBe(true);
    expect(seeded({ img: {}, data: { seed: null } })).toBe(false);
    expect(seeded(null)).toBe(false);
  });

  it("tells two engines and two models apart, and one model's two mounts not", () => {
    const sd1 = tinyDir('sd1');
    const version = generationVersion({ modelDir: sd1, engine: 'wasm' });
    expect(generationVersion({ modelDir: sd1, engine: 'wasm' })).toBe(version);
    expect(generationVersion({ modelDir: sd1, engine: 'onnxruntime' })).not.toBe(version);
    expect(generationVersion({ modelDir: tinyDir('sd2'), engine: 'wasm' })).not.toBe(version);
  });
});
