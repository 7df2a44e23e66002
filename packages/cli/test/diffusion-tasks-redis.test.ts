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

  it('a replica killed -9 mid-job loses nothing: the other replica, which saw its progress, runs it again', async () => {
    // Two replicas, two long jobs: each replica runs one generation at a time, so each takes one. A is killed
    // while both run; B shows A's job's progress before the kill and runs it again once A's lease lapses.
    const [a, b] = [start(), start()];
    const [urlA, urlB] = await Promise.all([a.url, b.url]);
    const submit = async (seed: number) => {
      const r = await fetch(`${urlA}/text2img/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          prompt: 'a large red circle in the centre on a white background',
          num_inference_steps: 150,
          seed,
        }),
      });
      expect(r.status).toBe(202);
      return ((await r.json()) as { id: string }).id;
    };
    const ids = [await submit(5), await submit(6)];
    type View = { status: string; step?: number | null };
    const view = async (url: string, id: string) =>
      (await (await fetch(`${url}/text2img/status?id=${id}`)).json()) as View;
    let before: View[];
    for (;;) {
      before = await Promise.all(ids.map((id) => view(urlB, id)));
      if (before.every((v) => v.status === 'running' && (v.step ?? 0) > 0)) break;
      expect(before.map((v) => v.status).filter((s) => s !== 'queued' && s !== 'running')).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    a.child.kill('SIGKILL');
    await a.done;
    const after: View[] = [];
    for (const id of ids) {
      let v: View;
      do {
        await new Promise((resolve) => setTimeout(resolve, 100));
        v = await view(urlB, id);
      } while (v.status === 'queued' || v.status === 'running');
      after.push(v);
    }
    console.info(
      `[diffusion redis kill -9] seen from B at the kill: ${JSON.stringify(before)}; then ${JSON.stringify(after.map((v) => v.status))}`,
    );
    expect(after.map((v) => v.status)).toEqual(['succeeded', 'succeeded']);
    for (const id of ids) {
      const image = await fetch(`${urlB}/text2img/get?id=${id}`);
      expect(image.status).toBe(200);
      const meta = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 64, 64]);
    }
  }, 240_000);
});
