import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../../src/service/diffusion-service.js';
import { writeTinyPipeline } from '../../../src/tiny/write-tiny-pipeline.js';

/**
 * The service's ControlNet surface over HTTP on the tiny model: the `controlnet` field in /docs.json, the
 * listings (`GET /models`, the extension's `/controlnet/*`) and what a request gets wrong, answered 400 (A1111: 422)
 * with a code and the field's name.
 */
const dirs: string[] = [];
let plain: ServerHandle;

const unit = { model: 'edges', image: Buffer.from('not a picture').toString('base64') };

beforeAll(async () => {
  const dir = writeTinyPipeline(mkdtempSync(join(tmpdir(), 'tiffin-controlnet-service-')));
  dirs.push(dir);
  const sd = createDiffusionService({ modelDir: dir, logger: new MemoryLogger() });
  plain = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 180_000);

afterAll(async () => {
  await plain?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('a service without ControlNets', () => {
  it('documents the controlnet field of every kind and lists no ControlNet', async () => {
    const doc = JSON.stringify(await (await fetch(`${plain.url}/docs.json`)).json());
    expect(doc).toContain('conditioning_scale');
    expect(doc).toContain('guidance_end');
    expect(
      ((await (await fetch(`${plain.url}/models`)).json()) as { controlnets: string[] }).controlnets,
    ).toEqual([]);
    expect(await (await fetch(`${plain.url}/controlnet/model_list`)).json()).toEqual({ model_list: [] });
    const modules = (await (await fetch(`${plain.url}/controlnet/module_list`)).json()) as {
      module_list: string[];
    };
    expect(modules.module_list).toEqual(['none', 'canny']);
    expect(await (await fetch(`${plain.url}/controlnet/version`)).json()).toEqual({ version: 2 });
  });

  it('answers a request with units 400, naming the field, and bad units by their schema', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ prompt: 'x', controlnet: [unit] }, /^controlnet: this service has no ControlNet loaded/],
      [{ prompt: 'x', controlnet: [{ ...unit, module: 'openpose' }] }, /module/],
      [{ prompt: 'x', controlnet: [{ ...unit, guidance_start: 0.9, guidance_end: 0.1 }] }, /guidance_end/],
      [{ prompt: 'x', controlnet: Array(5).fill(unit) }, /controlnet/],
      [{ prompt: 'x', controlnet: [{ image: unit.image }] }, /model/],
    ];
    for (const [body, message] of cases) {
      const res = await post(`${plain.url}/text2img`, body);
      expect(res.status, String(message)).toBe(400);
      const answer = (await res.json()) as { error: string; code: string };
      expect(answer.code).toMatch(/^[A-Z_]+$/);
      expect(answer.error).toMatch(message);
    }
  });

  it("answers A1111's txt2img with an enabled unit 422 in A1111's shape", async () => {
    const res = await post(`${plain.url}/sdapi/v1/txt2img`, {
      prompt: 'x',
      steps: 1,
      alwayson_scripts: { controlnet: { args: [{ model: 'edges', module: 'canny', image: unit.image }] } },
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { detail: string }).detail).toMatch(
      /alwayson_scripts\.controlnet\.args\[0\]\.model: unknown ControlNet "edges"/,
    );
  });
});
