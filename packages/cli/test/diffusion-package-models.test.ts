import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyPipeline } from '@tiffin/diffusion/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeOnRedis } from '../../tasks-redis/test/describe-on-redis.js';
import { type CollectedProcess, spawnTiffin } from './cli-process.js';

/**
 * `tiffin diffusion build --models-dir DIR --tasks redis://…`: the checkpoints go into the package beside the
 * model, and the package's service starts with them and with its image jobs in that store, as
 * `tiffin serve <tag>` (the package's README line) starts it (docs/diffusion-service.md).
 */
const work = mkdtempSync(join(tmpdir(), 'tiffin-diffusion-package-models-'));
const home = join(work, 'home');
const running: CollectedProcess[] = [];
afterAll(async () => {
  for (const p of running) {
    // A job may still run: no drain wanted here.
    p.child.kill('SIGKILL');
    await p.done;
  }
  rmSync(work, { recursive: true, force: true });
}, 30_000);

const tiffin = (args: string[]) => {
  const p = spawnTiffin(args, { TIFFIN_TF_BACKEND: 'wasm', TIFFIN_MODELS_DIR: '', TIFFIN_HOME: home });
  running.push(p);
  return p;
};

async function text2img(url: string, extra: Record<string, unknown> = {}): Promise<Buffer> {
  const res = await fetch(`${url}/text2img`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'a tiffin box', num_inference_steps: 2, seed: 7, ...extra }),
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describeOnRedis('tiffin diffusion build --models-dir --tasks redis://', (redis) => {
  let url: string;

  beforeAll(async () => {
    const checkpoints = join(work, 'checkpoints');
    writeTinyPipeline(join(checkpoints, 'other'), { weightSeed: 5 });
    const built = await tiffin([
      'diffusion',
      'build',
      'stable-diffusion',
      '--model-id',
      writeTinyPipeline(join(work, 'tiny')),
      '--models-dir',
      checkpoints,
      '--tasks',
      redis.url,
      '--name',
      'tiny-ckpt',
      '--version',
      '1',
      '--no-lockfile',
      '--engine',
      'wasm',
    ]).done;
    expect(built.stderr).toContain('Saving the checkpoints of checkpoints to the model store...');
    expect(built.stderr.slice(-2000)).not.toMatch(/rror/);
    expect(built.code).toBe(0);
    url = await tiffin(['serve', 'tiny-ckpt:1', '--port', '0']).url;
  }, 180_000);

  it("serves the packaged checkpoints by name: the answer is the chosen checkpoint's", async () => {
    const listed = (await (await fetch(`${url}/models`)).json()) as { models: Array<{ name: string }> };
    expect(listed.models.map((m) => m.name).slice(1)).toEqual(['other']);
    const start = await text2img(url);
    const other = await text2img(url, { model: 'other' });
    expect(other.equals(start)).toBe(false);
    expect((await text2img(url, { model: 'other' })).equals(other)).toBe(true);
  }, 120_000);

  it('keeps its image jobs in the Redis it was built with', async () => {
    const submitted = await fetch(`${url}/text2img/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a tiffin box', num_inference_steps: 2, seed: 1 }),
    });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    const port = new URL(redis.url).port;
    const keys = spawnSync('redis-cli', ['-p', port, '--scan'], { encoding: 'utf8' }).stdout;
    expect(keys).toContain(id);
  }, 60_000);
});
