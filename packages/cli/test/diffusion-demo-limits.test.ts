import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { caption, readScene, type SceneSpec } from '@tiffin/demo-model';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CollectedProcess, spawnTiffin } from './cli-process.js';

/**
 * `tiffin diffusion start demo` as a user starts it: the demo's own defaults (its tiffin_defaults.json) draw the
 * colours prompts ask for; sizes are bounded by the model's size; a generation past `--timeout` or whose client
 * left stops at its next step, and the server keeps answering the others.
 */
let proc: CollectedProcess;
let url = '';
let stderr = '';
const figures: string[] = [];

const post = (body: unknown, signal?: AbortSignal) =>
  fetch(`${url}/text2img`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

/** The generation log records (JSON lines on stderr) so far. */
function records(): Array<Record<string, unknown>> {
  return stderr.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

beforeAll(async () => {
  proc = spawnTiffin(['diffusion', 'start', 'demo', '--port', '0', '--timeout', '6'], {
    TIFFIN_TF_BACKEND: 'onnxruntime',
    TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-cli-home-')),
  });
  proc.child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  url = await proc.url;
}, 120_000);

afterAll(async () => {
  proc?.child.kill('SIGTERM');
  await proc?.done;
  console.info(`[demo limits]\n  ${figures.join('\n  ')}`);
});

describe('tiffin diffusion start demo', () => {
  it('serves the demo’s own defaults and a size limit from its 64-px size', async () => {
    const res = await fetch(`${url}/defaults`);
    expect(await res.json()).toMatchObject({
      scheduler: 'ddim',
      num_inference_steps: 20,
      guidance_scale: 1.5,
      height: 64,
      width: 64,
      max_size: 128,
    });
    const big = await post({ prompt: 'a red circle', height: 1024, width: 1024 });
    expect(big.status).toBe(400);
  });

  it('draws the colours prompts ask for at its defaults (no steps or guidance given)', async () => {
    const scenes: SceneSpec[] = [
      { shape: 'circle', colour: 'red', size: 'large', position: 'centre', background: 'white' },
      { shape: 'square', colour: 'blue', size: 'large', position: 'centre', background: 'white' },
      { shape: 'triangle', colour: 'green', size: 'large', position: 'centre', background: 'black' },
      { shape: 'circle', colour: 'yellow', size: 'large', position: 'centre', background: 'black' },
      { shape: 'square', colour: 'purple', size: 'large', position: 'centre', background: 'white' },
      { shape: 'cross', colour: 'orange', size: 'large', position: 'centre', background: 'grey' },
    ];
    const read: string[] = [];
    for (const [i, scene] of scenes.entries()) {
      const res = await post({ prompt: caption(scene), seed: i });
      expect(res.status).toBe(200);
      const { data } = await sharp(Buffer.from(await res.arrayBuffer()))
        .raw()
        .toBuffer({ resolveWithObject: true });
      read.push(readScene({ width: 64, height: 64, data: new Uint8Array(data) }).colour ?? 'none');
    }
    const right = read.filter((c, i) => c === scenes[i].colour).length;
    figures.push(`colours at the demo's defaults: ${right} of 6 right (${read.join(', ')})`);
    expect(right).toBeGreaterThanOrEqual(5);
  });

  it('stops a generation past --timeout, or whose client left, at its next step; others keep being answered', async () => {
    const heavy = {
      prompt: 'a red circle',
      height: 128,
      width: 128,
      num_inference_steps: 150,
      num_images_per_prompt: 4,
    };
    const t0 = performance.now();
    const timedOut = await post(heavy);
    expect(timedOut.status).toBe(504);
    const at504 = performance.now() - t0;
    const next = await post({ prompt: 'a blue square', seed: 1, num_inference_steps: 2 });
    expect(next.status).toBe(200);
    figures.push(
      `--timeout 6: 504 after ${at504.toFixed(0)} ms; the next request answered ${(performance.now() - t0).toFixed(0)} ms after the heavy one was sent`,
    );

    const controller = new AbortController();
    const left = post(heavy, controller.signal).catch(() => 'aborted');
    setTimeout(() => controller.abort(), 700);
    expect(await left).toBe('aborted');
    const t1 = performance.now();
    const after = await post({ prompt: 'a green cross', seed: 2, num_inference_steps: 2 });
    expect(after.status).toBe(200);
    figures.push(
      `after a client left: the next request answered in ${(performance.now() - t1).toFixed(0)} ms`,
    );

    // Both heavy generations were cancelled well before their 150 steps.
    const cancelled = records().filter((r) => r.msg === 'generation cancelled');
    expect(cancelled.length).toBeGreaterThanOrEqual(2);
    const steps = records().filter((r) => r.msg === 'generation step' && r.totalSteps === 150);
    expect(steps.length).toBeGreaterThan(0);
    expect(Math.max(...steps.map((r) => Number(r.step)))).toBeLessThan(150);
  }, 60_000);
});
