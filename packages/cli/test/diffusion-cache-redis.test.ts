import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { createDiffusionService } from '@tiffin/diffusion';
import { RedisResponseCache } from '@tiffin/tasks-redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tinyDir } from '../../diffusion/test/helpers/tiny.js';
import { describeOnRedis } from '../../tasks-redis/test/describe-on-redis.js';

// Two diffusion replicas on one model folder with `--cache-ttl` and `--cache redis://…` (docs/diffusion-service.md,
// the response cache): a seeded image one replica generated is the other's hit. Here, not in the diffusion
// package, which does not depend on @tiffin/tasks-redis.
describeOnRedis('two diffusion replicas sharing the response cache on a real redis-server', (redis) => {
  const replicas: ServerHandle[] = [];
  beforeAll(async () => {
    const modelDir = tinyDir('sd1');
    for (let i = 0; i < 2; i++) {
      const sd = createDiffusionService({
        modelDir,
        backend: 'wasm',
        logger: new MemoryLogger(),
        cache: { ttl: 60 },
      });
      replicas.push(
        await serve(sd.service, {
          port: 0,
          host: '127.0.0.1',
          logger: false,
          handleSignals: false,
          cache: await RedisResponseCache.open(redis.url),
        }),
      );
    }
  }, 240_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close()));
  }, 60_000);

  const generate = (replica: ServerHandle, seed: number) =>
    fetch(`${replica.url}/text2img`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        prompt: 'a shared lighthouse',
        num_inference_steps: 2,
        height: 32,
        width: 32,
        seed,
      }),
    });

  it("sends one replica's seeded image from the cache on the other", async () => {
    const [a, b] = replicas as [ServerHandle, ServerHandle];
    const made = await generate(a, 5);
    expect(made.status).toBe(200);
    expect(made.headers.get('tiffin-cache')).toBe('miss');
    const shared = await generate(b, 5);
    expect(shared.headers.get('tiffin-cache')).toBe('hit');
    expect(shared.headers.get('x-seed')).toBe('5');
    expect(new Uint8Array(await shared.arrayBuffer())).toEqual(new Uint8Array(await made.arrayBuffer()));
    expect((await generate(b, 6)).headers.get('tiffin-cache')).toBe('miss');
  }, 120_000);
});
