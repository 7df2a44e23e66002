import sharp from 'sharp';
import { afterAll, expect, it } from 'vitest';
import { describeOnRedis } from '../../tasks-redis/test/describe-on-redis.js';
import { type CollectedProcess, spawnDemo } from './cli-process.js';

const running: CollectedProcess[] = [];
afterAll(async () => {
  for (const p of running) {
    p.child.kill('SIGKILL');
    await p.done;
  }
});

// `tiffin diffusion start --tasks redis://…` as `tiffin serve` takes it: two replicas share the image jobs.
describeOnRedis('tiffin diffusion start --tasks redis:// on a real redis-server', (redis) => {
  const start = () => {
    const p = spawnDemo(['--tasks', redis.url]);
    running.push(p);
    return p;
  };

  it('a job submitted to one replica is followed and fetched from the other', async () => {
    const [a, b] = [start(), start()];
    const [urlA, urlB] = await Promise.all([a.url, b.url]);
    const submitted = await fetch(`${urlA}/text2img/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a small blue square at the top left on a black background', seed: 1 }),
    });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    let view: { status: string };
    do {
      await new Promise((resolve) => setTimeout(resolve, 100));
      view = (await (await fetch(`${urlB}/text2img/status?id=${id}`)).json()) as { status: string };
    } while (view.status === 'queued' || view.status === 'running');
    expect(view.status).toBe('succeeded');
    const image = await fetch(`${urlB}/text2img/get?id=${id}`);
    expect(image.status).toBe(200);
    const meta = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 64, 64]);
  }, 120_000);
});
