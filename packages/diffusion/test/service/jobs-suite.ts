import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve, type TaskStore } from '@tiffin/core';
import type { TaskView as JobView } from '@tiffin/core/tasks';
import { decodeBmp } from '@tiffin/io-image';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService, type DiffusionService } from '../../src/service/diffusion-service.js';
import { tinyDir } from '../helpers/tiny.js';
import { cancelledCount, jpegSize } from './service-helpers.js';

/**
 * The jobs API (`/text2img/submit`, status, get, cancel, events) on the tiny pipeline: core's tasks (the store's
 * own bounds, expiry and error bodies are tested in core, test/tasks/). The same tests run on each task store
 * a served service may be given: the default in memory, on disk (`jobs-stores.test.ts`) and on Redis (the
 * CLI's tests, which may import `@tiffin/tasks-redis`).
 */
export function describeJobs(storeName: string, makeStore?: () => Promise<TaskStore>): void {
  describe(`jobs API (${storeName})`, () => {
    const work = mkdtempSync(join(tmpdir(), 'tiffin-sd-jobs-'));
    writeFileSync(join(work, 'broken.safetensors'), 'not a safetensors file');
    let handle: ServerHandle;
    let sd: DiffusionService;

    const small = { prompt: 'a tiny cat', height: 16, width: 16, num_inference_steps: 3, seed: 7 };
    const url = (path: string) => `${handle.url}${path}`;
    const submit = async (body: unknown): Promise<string> => {
      const res = await fetch(url('/text2img/submit'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      // 202 Accepted since jobs are core tasks (it was 200).
      expect(res.status).toBe(202);
      return ((await res.json()) as { id: string }).id;
    };
    const status = async (id: string) =>
      (await (await fetch(url(`/text2img/status?id=${id}`))).json()) as JobView;

    async function until(id: string, done: (view: JobView) => boolean): Promise<JobView> {
      for (;;) {
        const view = await status(id);
        if (done(view)) return view;
        await new Promise((r) => setTimeout(r, 20));
      }
    }

    beforeAll(async () => {
      sd = createDiffusionService({
        modelDir: tinyDir('sd1'),
        backend: 'wasm',
        loraDir: work,
        logger: new MemoryLogger(),
      });
      // As `tiffin serve --tasks` does: the store given to the service before it is served.
      if (makeStore) sd.service.useTaskStore(await makeStore());
      handle = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
    }, 120_000);

    afterAll(async () => {
      await handle?.close();
    });

    describe('routes', () => {
      it('submits, reports progress as server-sent events, and returns the images of a succeeded job', async () => {
        const id = await submit(small);
        const events = await fetch(url(`/text2img/events?id=${id}`));
        expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/);
        const text = await events.text();
        const names = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
        expect(names.filter((n) => n === 'step')).toHaveLength(3);
        expect(names.at(-1)).toBe('done');
        const view = await until(id, (v) => v.status === 'succeeded');
        expect(view).toMatchObject({ id, api: 'text2img', step: 3, total_steps: 3, error: null });
        expect(view.expires_at).not.toBeNull();
        const image = await fetch(url(`/text2img/get?id=${id}`));
        expect(image.status).toBe(200);
        expect(image.headers.get('content-type')).toBe('image/jpeg');
        expect(image.headers.get('x-seed')).toBe('7');
        const direct = await fetch(url('/text2img'), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(small),
        });
        const bytes = Buffer.from(await image.arrayBuffer());
        expect(jpegSize(bytes)).toEqual({ width: 16, height: 16 });
        expect(bytes.equals(Buffer.from(await direct.arrayBuffer()))).toBe(true);
        // Events of a finished job: its final state at once.
        const again = await (await fetch(url(`/text2img/events?id=${id}`))).text();
        expect(again).toMatch(/^event: succeeded$/m);
      });

      it('adds a low-resolution preview of the latents to each step event when submitted with ?preview=true', async () => {
        const res = await fetch(url('/text2img/submit?preview=true'), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(small),
        });
        const { id } = (await res.json()) as { id: string };
        const text = await (await fetch(url(`/text2img/events?id=${id}`))).text();
        const steps = text
          .split('\n\n')
          .filter((block) => block.includes('event: step'))
          .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as { preview?: string });
        expect(steps).toHaveLength(3);
        for (const step of steps) {
          expect(step.preview).toMatch(/^data:image\/bmp;base64,/);
          const bmp = decodeBmp(Buffer.from((step.preview as string).split(',')[1], 'base64'));
          // Latent size: the tiny VAE scales by 2.
          expect([bmp.width, bmp.height]).toEqual([8, 8]);
        }
        // Without the flag, no previews.
        const plain = await submit(small);
        const plainText = await (await fetch(url(`/text2img/events?id=${plain}`))).text();
        expect(plainText).not.toContain('preview');
      });

      it('cancels a running job at its next step; it ends cancelled and has no images', async () => {
        const id = await submit({ ...small, height: 32, width: 32, num_inference_steps: 100 });
        const running = await until(id, (v) => v.status === 'running' && v.step >= 1);
        expect(running.total_steps).toBe(100);
        const res = await fetch(url(`/text2img/cancel?id=${id}`), { method: 'POST' });
        expect(res.status).toBe(200);
        const view = await until(id, (v) => v.status !== 'running');
        expect(view.status).toBe('cancelled');
        expect(view.step).toBeLessThan(100);
        expect(view.error?.code).toBe('CANCELLED');
        expect(await cancelledCount(handle.url, 'cancelled')).toBe(1);
        const get = await fetch(url(`/text2img/get?id=${id}`));
        expect(get.status).toBe(409);
        expect(((await get.json()) as { code: string }).code).toBe('JOB_NOT_DONE');
      });

      it('a job that fails ends failed with its error, never stuck running', async () => {
        const id = await submit({ ...small, lora_weights: 'broken.safetensors' });
        const view = await until(id, (v) => v.status !== 'queued' && v.status !== 'running');
        expect(view.status).toBe('failed');
        expect(view.error?.code).toBe('INVALID_ARGUMENT');
        expect(view.error?.error).toMatch(/LoRA/);
        expect(view.error?.error).toContain('broken.safetensors');
        // Named as the request named it: the server's folder stays private.
        expect(view.error?.error).not.toContain(work);
      });

      it('answers 404 for an unknown job and 400 without an id', async () => {
        const unknown = await fetch(url('/text2img/status?id=nope'));
        expect(unknown.status).toBe(404);
        expect(((await unknown.json()) as { code: string }).code).toBe('JOB_NOT_FOUND');
        expect((await fetch(url('/text2img/get'))).status).toBe(400);
        expect((await fetch(url('/text2img/cancel?id=nope'), { method: 'POST' })).status).toBe(404);
        // The event stream too: a 404 with the error body before any event, not a stream cut off after its 200.
        const events = await fetch(url('/text2img/events?id=nope'));
        expect(events.status).toBe(404);
        expect(((await events.json()) as { code: string }).code).toBe('JOB_NOT_FOUND');
        // A bad body is refused at submit, as the synchronous API refuses it.
        const bad = await fetch(url('/text2img/submit'), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...small, height: 20 }),
        });
        expect(bad.status).toBe(400);
      });
    });
  });
}
