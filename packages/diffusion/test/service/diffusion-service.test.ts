import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { MemoryLogger, NDArray, type ServerHandle, serve } from '@tiffin/core';
import { readResponseBody } from '@tiffin/core/internal';
import { encodeBmp, Image } from '@tiffin/io-image';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService, type DiffusionService } from '../../src/service/diffusion-service.js';
import { resizeLanczos } from '../../src/service/lanczos-resize.js';
import { tinyDir } from '../helpers/tiny.js';
import { jpegSize, pngImageData, writeTinyLora } from './service-helpers.js';

/**
 * The service end to end over HTTP on the tiny random pipeline: the worker thread loads the model,
 * requests are tiny (2 steps, ≤ 32 px) so the suite stays fast on a shared 2-core machine.
 */
const work = mkdtempSync(join(tmpdir(), 'tiffin-sd-service-'));
const loraDir = join(work, 'loras');
const figures: string[] = [];

let handle: ServerHandle;
let sd: DiffusionService;
const logger = new MemoryLogger();

const post = (path: string, body: unknown, init: RequestInit = {}) =>
  fetch(`${handle.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string> | undefined) },
    body: JSON.stringify(body),
    signal: init.signal,
  });

const small = { prompt: 'a tiny cat', height: 16, width: 24, num_inference_steps: 2, seed: 7 };

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t0 };
}

beforeAll(async () => {
  writeTinyLora(loraDir, 'style.safetensors', 'style');
  writeFileSync(join(work, 'outside.safetensors'), 'not inside a root');
  sd = createDiffusionService({ modelDir: tinyDir('sd1'), loraDir, backend: 'wasm', maxQueue: 1, logger });
  const started = performance.now();
  handle = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
  figures.push(`server start incl. worker + model load: ${(performance.now() - started).toFixed(0)} ms`);
}, 120_000);

afterAll(async () => {
  await handle?.close();
  console.info(`[diffusion service figures]\n  ${figures.join('\n  ')}`);
});

describe('POST /text2img', () => {
  it('returns a JPEG of the requested size, the same bytes for the same seed', async () => {
    const first = await timed(() => post('/text2img', small));
    expect(first.value.status).toBe(200);
    expect(first.value.headers.get('content-type')).toBe('image/jpeg');
    expect(first.value.headers.get('x-seed')).toBe('7');
    const a = new Uint8Array(await first.value.arrayBuffer());
    expect(jpegSize(a)).toEqual({ width: 24, height: 16 });
    const second = await timed(() => post('/text2img', small));
    const b = new Uint8Array(await second.value.arrayBuffer());
    expect(Buffer.from(b).equals(Buffer.from(a))).toBe(true);
    const other = new Uint8Array(await (await post('/text2img', { ...small, seed: 8 })).arrayBuffer());
    expect(Buffer.from(other).equals(Buffer.from(a))).toBe(false);
    figures.push(
      `text2img 24×16, 2 steps: first ${first.ms.toFixed(0)} ms, second ${second.ms.toFixed(0)} ms`,
    );
    // Per-step progress is logged with the request id.
    const steps = logger.records.filter((r) => r.msg === 'generation step');
    expect(steps.length).toBeGreaterThanOrEqual(2);
    expect(typeof steps[0].requestId).toBe('string');
  });

  it("defaults to the model's own size, accepts nulls and extra fields", async () => {
    const res = await post('/text2img', {
      prompt: 'x',
      negative_prompt: null,
      lora_weights: null,
      num_inference_steps: 1,
      seed: 1,
      extra: 'ignored',
    });
    expect(res.status).toBe(200);
    expect(jpegSize(new Uint8Array(await res.arrayBuffer()))).toEqual({ width: 32, height: 32 });
  });

  it('reads prompts as A1111 ((word:1.0) is word), and as literal text with prompt_weighting false', async () => {
    const bytes = async (body: Record<string, unknown>) => {
      const res = await post('/text2img', { ...small, output_format: 'png', ...body });
      expect(res.status).toBe(200);
      return pngImageData(new Uint8Array(await res.arrayBuffer()));
    };
    const plain = await bytes({ prompt: 'a tiny cat' });
    expect((await bytes({ prompt: 'a tiny (cat:1.0)' })).equals(plain)).toBe(true);
    expect((await bytes({ prompt: 'a tiny (cat:1.0)', prompt_weighting: false })).equals(plain)).toBe(false);
  });

  it.each([
    ['a size that is not a multiple of 8', { height: 20 }],
    ['a size above the bound', { width: 2048 }],
    ['too many steps', { num_inference_steps: 500 }],
    ['an unknown scheduler', { scheduler: 'nope' }],
    ['no prompt', { prompt: undefined }],
  ])('answers 400 for %s', async (_what, change) => {
    const res = await post('/text2img', { ...small, ...change });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string };
    expect(body.error.length).toBeGreaterThan(0);
  });
});

/** The parts of a multipart/mixed body: headers (lower-cased) and bytes. */
function multipartParts(
  body: Buffer,
  contentType: string,
): Array<{ headers: Record<string, string>; data: Buffer }> {
  const boundary = /boundary=([^;]+)/.exec(contentType)?.[1];
  if (!boundary) throw new Error(`no boundary in ${contentType}`);
  const parts: Array<{ headers: Record<string, string>; data: Buffer }> = [];
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    const part = body.subarray(start + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const headers = Object.fromEntries(
      part
        .subarray(0, split)
        .toString()
        .split('\r\n')
        .map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
    );
    parts.push({ headers, data: part.subarray(split + 4) });
    at = next;
  }
  return parts;
}

describe('controls', () => {
  it('answers several images as one multipart/mixed response, a JPEG part per image with its seed', async () => {
    const res = await post('/text2img', { ...small, num_images_per_prompt: 3 });
    expect(res.status).toBe(200);
    const type = res.headers.get('content-type') ?? '';
    expect(type).toMatch(/^multipart\/mixed; boundary=/);
    const parts = multipartParts(Buffer.from(await res.arrayBuffer()), type);
    expect(parts.map((p) => p.headers['x-seed'])).toEqual(['7', '8', '9']);
    for (const p of parts) {
      expect(p.headers['content-type']).toBe('image/jpeg');
      expect(jpegSize(p.data)).toEqual({ width: 24, height: 16 });
    }
    expect(parts[0].data.equals(parts[1].data)).toBe(false);
    const tooMany = await post('/text2img', { ...small, num_images_per_prompt: 5 });
    expect(tooMany.status).toBe(400);
  });

  it('lists the LoRA files requests may name at GET /loras, without server paths', async () => {
    const res = await fetch(`${handle.url}/loras`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { loras: Array<{ name: string; bytes: number }> };
    expect(body.loras.map((l) => l.name)).toEqual(['style.safetensors']);
    expect(body.loras[0].bytes).toBeGreaterThan(0);
    expect(JSON.stringify(body)).not.toContain(work);
  });
});

describe('LoRA per request', () => {
  it('accepts a list of LoRAs with weights: weight 1 is the plain name, another weight another image', async () => {
    // The images' pixels (PNG image data): their infotexts name the LoRAs as the requests spelled them.
    const bytes = async (body: Record<string, unknown>) => {
      const res = await post('/text2img', { ...body, output_format: 'png' });
      expect(res.status).toBe(200);
      return pngImageData(new Uint8Array(await res.arrayBuffer()));
    };
    const named = await bytes({ ...small, lora_weights: 'style.safetensors' });
    const listed = await bytes({ ...small, lora_weights: [{ path: 'style.safetensors', weight: 1 }] });
    const half = await bytes({ ...small, lora_weights: [{ path: 'style.safetensors', weight: 0.5 }] });
    const twice = await bytes({
      ...small,
      lora_weights: [
        { path: 'style.safetensors', weight: 0.5 },
        { path: 'style.safetensors', weight: 0.5 },
      ],
    });
    expect(listed.equals(named)).toBe(true);
    expect(half.equals(named)).toBe(false);
    // Two halves of one LoRA applied together are the whole LoRA (halving is exact in float32).
    expect(twice.equals(named)).toBe(true);
    const bad = await post('/text2img', {
      ...small,
      lora_weights: [{ path: 'style.safetensors', weight: 'x' }],
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('BAD_INPUT');
  });

  it('changes the output for that request only', async () => {
    const base = Buffer.from(await (await post('/text2img', small)).arrayBuffer());
    const lora = await timed(() => post('/text2img', { ...small, lora_weights: 'style.safetensors' }));
    expect(lora.value.status).toBe(200);
    const withLora = Buffer.from(await lora.value.arrayBuffer());
    expect(withLora.equals(base)).toBe(false);
    const after = Buffer.from(await (await post('/text2img', small)).arrayBuffer());
    expect(after.equals(base)).toBe(true);
    figures.push(`text2img with a per-request LoRA (unfused): ${lora.ms.toFixed(0)} ms`);
  });

  it('gives the same images for two requests in flight together (one with a LoRA) as one by one', async () => {
    const withLora = { ...small, seed: 11, lora_weights: 'style.safetensors' };
    const bytes = async (res: Response | Promise<Response>) => {
      const r = await res;
      expect(r.status).toBe(200);
      return Buffer.from(await r.arrayBuffer());
    };
    const alone = [await bytes(post('/text2img', withLora)), await bytes(post('/text2img', small))];
    // The queue lets one generation run at a time (maxQueue 1 here: the second waits, not refused).
    const together = await Promise.all([bytes(post('/text2img', withLora)), bytes(post('/text2img', small))]);
    expect(together[0].equals(alone[0])).toBe(true);
    expect(together[1].equals(alone[1])).toBe(true);
    expect(together[0].equals(together[1])).toBe(false);
  });

  it.each([
    ['a relative path leaving the root', '../outside.safetensors'],
    ['an absolute path elsewhere', join(work, 'outside.safetensors')],
    ['a file that does not exist', 'missing.safetensors'],
  ])('refuses %s with 400', async (_what, name) => {
    const res = await post('/text2img', { ...small, lora_weights: name });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; code: string };
    expect(body.error).toMatch(/lora_weights/);
    expect(body.code).toBe('LORA_PATH');
  });
});

describe('the model worker keeps the server responsive', () => {
  it('answers /livez and /metrics while an image is generated', async () => {
    let finished = 0;
    const generation = post('/text2img', { ...small, height: 32, width: 32, num_inference_steps: 12 }).then(
      async (res) => {
        await res.arrayBuffer();
        finished = performance.now();
        return res.status;
      },
    );
    // Wait until the worker reports a step, so the probe really lands mid-generation.
    await new Promise<void>((resolve) => {
      const stream = sd.progress.events(new AbortController().signal);
      (async () => {
        for await (const event of stream) if (event.status === 'step') break;
        resolve();
      })();
    });
    const live = await timed(() => fetch(`${handle.url}/livez`));
    const liveAnswered = performance.now();
    const metrics = await timed(() => fetch(`${handle.url}/metrics`));
    expect(live.value.status).toBe(200);
    expect(metrics.value.status).toBe(200);
    expect(await generation).toBe(200);
    expect(liveAnswered).toBeLessThan(finished);
    figures.push(`/livez during generation: ${live.ms.toFixed(1)} ms; /metrics: ${metrics.ms.toFixed(1)} ms`);
  });

  it('streams per-step progress for one request on POST /progress', async () => {
    const res = await post('/progress', { request_id: 'follow-me' });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const image = post('/text2img', small, { headers: { 'x-request-id': 'follow-me' } });
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect((await image).status).toBe(200);
    const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(events[0]).toBe('queued');
    expect(events.filter((e) => e === 'step').length).toBeGreaterThanOrEqual(2);
    expect(events.at(-1)).toBe('done');
    expect(text).toContain('"request_id":"follow-me"');
  });

  it('streams every generation only when the server allows it', async () => {
    // On main `{}` streamed every client's generations: their ids (enough to fetch their images) and previews.
    const res = await post('/progress', {});
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'BAD_INPUT',
      error: expect.stringMatching(/--progress-all/),
    });
  });

  it("keeps a client's request id out of the job ids' namespace", async () => {
    const submitted = await post('/text2img/submit', { ...small, num_inference_steps: 6 });
    const { id } = (await submitted.json()) as { id: string };
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const events = fetch(`${handle.url}/text2img/events?id=${id}`).then((r) => r.text());
    // A request that names the job's id as its own x-request-id, then goes away: on main its `cancelled` event
    // ended the job's event stream while the job went on running.
    const leaving = new AbortController();
    const forged = post('/text2img', small, {
      headers: { 'x-request-id': id },
      signal: leaving.signal,
    }).catch((err: Error) => err);
    await waitFor(() => sd.queue.size.waiting === 1);
    leaving.abort();
    await forged;
    const text = await events;
    const names = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names).not.toContain('cancelled');
    expect(names.at(-1)).toBe('done');
    expect(
      ((await (await fetch(`${handle.url}/text2img/status?id=${id}`)).json()) as { status: string }).status,
    ).toBe('succeeded');
  });

  it('answers 503 with Retry-After when the queue is full, and drops a waiting request whose client left', async () => {
    const long = { ...small, height: 32, width: 32, num_inference_steps: 10 };
    const running = post('/text2img', long);
    await waitFor(() => sd.queue.size.running === 1);
    const leaving = new AbortController();
    const waiting = post('/text2img', small, { signal: leaving.signal }).catch((err: Error) => err);
    await waitFor(() => sd.queue.size.waiting === 1);
    const refused = await post('/text2img', small);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const refusal = (await refused.json()) as { error: string; code: string };
    expect(refusal.error).toMatch(/queue is full/);
    expect(refusal.code).toBe('QUEUE_FULL');
    leaving.abort();
    expect(await waiting).toBeInstanceOf(Error);
    await waitFor(() => sd.queue.size.waiting === 0);
    expect(sd.queue.size.running).toBe(1);
    expect((await running).status).toBe(200);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('img2img (an SDXL folder: the service serves either family the same way)', () => {
  let img2img: ServerHandle;
  beforeAll(async () => {
    const modelDir = tinyDir('sdxl');
    const svc = createDiffusionService({
      modelDir,
      pipeline: 'img2img',
      backend: 'wasm',
      logger: new MemoryLogger(),
    });
    img2img = await serve(svc.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
  }, 120_000);
  afterAll(async () => {
    await img2img?.close();
  });

  it('re-draws an uploaded image at its size', async () => {
    const source = new Uint8Array(
      await (await post('/text2img', { ...small, width: 32, height: 24 })).arrayBuffer(),
    );
    const send = (data: unknown) => {
      const form = new FormData();
      form.set('img', new Blob([source], { type: 'image/jpeg' }), 'in.jpg');
      form.set('data', new Blob([JSON.stringify(data)], { type: 'application/json' }));
      return fetch(`${img2img.url}/img2img`, { method: 'POST', body: form });
    };
    const res = await timed(() => send({ prompt: 'a dog', num_inference_steps: 4, strength: 0.5, seed: 3 }));
    expect(res.value.status).toBe(200);
    const out = new Uint8Array(await res.value.arrayBuffer());
    expect(jpegSize(out)).toEqual({ width: 32, height: 24 });
    figures.push(`SDXL img2img 32×24, 4 steps × strength 0.5: ${res.ms.toFixed(0)} ms`);
    const bad = await send({ prompt: 'a dog', strength: 1.5 });
    expect(bad.status).toBe(400);
    // SDXL's default strength (0.3) re-draws less than 0.5 did, and without a negative prompt the negative
    // conditioning is zeros (force_zeros_for_empty_prompt) rather than the encoded "".
    const soft = await send({ prompt: 'a dog', num_inference_steps: 4, seed: 3 });
    expect(soft.status).toBe(200);
    const softBytes = Buffer.from(await soft.arrayBuffer());
    expect(softBytes.equals(Buffer.from(out))).toBe(false);
    const emptyNegative = await send({
      prompt: 'a dog',
      negative_prompt: '',
      num_inference_steps: 4,
      seed: 3,
    });
    expect(Buffer.from(await emptyNegative.arrayBuffer()).equals(softBytes)).toBe(false);
    // What SDXL does not take is the client's mistake: a 400 with a stable code, not a 5xx.
    const skip = await send({ prompt: 'a dog', clip_skip: 1, num_inference_steps: 2 });
    expect(skip.status).toBe(400);
    const body = (await skip.json()) as { error: string; code: string };
    expect(body.error).toMatch(/clip_skip is not supported for SDXL/);
    expect(body.code).toBe('INVALID_ARGUMENT');
  });

  it('refuses an image over the size bound from its header, before decoding it (8 at once)', async () => {
    // A PNG whose header says 9000×9000 (81 M pixels, under io-image's own default bound): the header alone
    // must refuse it.
    const chunk = (type: string, data: Buffer) => {
      const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
      const out = Buffer.alloc(12 + data.length);
      out.writeUInt32BE(data.length, 0);
      body.copy(out, 4);
      out.writeUInt32BE(crc32(body), 8 + data.length);
      return out;
    };
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(9000, 0);
    ihdr.writeUInt32BE(9000, 4);
    ihdr.set([8, 2, 0, 0, 0], 8);
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', ihdr),
      chunk('IDAT', deflateSync(Buffer.alloc(9000 * 3 + 1))),
      chunk('IEND', Buffer.alloc(0)),
    ]);
    const send = () => {
      const form = new FormData();
      form.set('img', new Blob([png], { type: 'image/png' }), 'huge.png');
      form.set(
        'data',
        new Blob([JSON.stringify({ prompt: 'a dog', num_inference_steps: 2 })], { type: 'application/json' }),
      );
      return fetch(`${img2img.url}/img2img`, { method: 'POST', body: form });
    };
    const answers = await Promise.all(Array.from({ length: 8 }, send));
    for (const res of answers) {
      expect(res.status).toBe(413);
      expect(((await res.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
    }
  });

  it("takes SDXL img2img's prompt_2 and micro-conditioning, and refuses negative_crops_coords_top_left (diffusers' img2img ignores it)", async () => {
    const source = encodeBmp(
      new Uint8Array(32 * 24 * 3).map((_, i) => (i * 37) % 256),
      32,
      24,
    );
    const send = async (fields: Record<string, unknown>) => {
      const form = new FormData();
      form.set('img', new Blob([source], { type: 'image/bmp' }), 'in.bmp');
      const data = { prompt: 'a dog', negative_prompt: 'blurry', num_inference_steps: 4, seed: 3, ...fields };
      form.set('data', new Blob([JSON.stringify(data)], { type: 'application/json' }));
      return fetch(`${img2img.url}/img2img`, { method: 'POST', body: form });
    };
    const bytes = async (res: Response) => {
      expect(res.status).toBe(200);
      return Buffer.from(await res.arrayBuffer());
    };
    const base = await bytes(await send({}));
    for (const fields of [
      { prompt_2: 'a watercolor fox' },
      { original_size: [1024, 768], crops_coords_top_left: [16, 0], target_size: [24, 32] },
      { negative_original_size: [16, 16] },
    ])
      expect((await bytes(await send(fields))).equals(base), JSON.stringify(fields)).toBe(false);
    const refused = await send({ negative_crops_coords_top_left: [0, 8] });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { error: string; code: string };
    expect(body.code).toBe('BAD_INPUT');
    expect(body.error).toMatch(/negative_crops_coords_top_left is not used by SDXL img2img/);
  });

  it('resizes (Lanczos, like diffusers) an upload whose sides are not multiples of 8, instead of cropping it', async () => {
    // A lossless (BMP) 37×29 upload: the service must treat it exactly like its 32×24 Lanczos resize.
    const width = 37;
    const height = 29;
    const rgb = new Uint8Array(width * height * 3);
    for (let i = 0; i < rgb.length; i++) rgb[i] = (i * 7 + ((i / 3) | 0) * 13) % 256;
    const resized = resizeLanczos({ width, height, data: rgb }, 32, 24);
    const cropped = new Uint8Array(32 * 24 * 3);
    for (let y = 0; y < 24; y++) cropped.set(rgb.subarray(y * width * 3, y * width * 3 + 32 * 3), y * 32 * 3);
    const data = { prompt: 'a dog', num_inference_steps: 2, strength: 0.5, seed: 5 };
    const send = async (bmp: Uint8Array) => {
      const form = new FormData();
      form.set('img', new Blob([bmp], { type: 'image/bmp' }), 'in.bmp');
      form.set('data', new Blob([JSON.stringify(data)], { type: 'application/json' }));
      const res = await fetch(`${img2img.url}/img2img`, { method: 'POST', body: form });
      expect(res.status).toBe(200);
      return Buffer.from(await res.arrayBuffer());
    };
    const fromOdd = await send(encodeBmp(rgb, width, height));
    expect(jpegSize(fromOdd)).toEqual({ width: 32, height: 24 });
    expect(fromOdd.equals(await send(encodeBmp(resized.data, 32, 24)))).toBe(true);
    expect(fromOdd.equals(await send(encodeBmp(cropped, 32, 24)))).toBe(false);
  });

  it('takes an RGBA upload as RGB, the alpha channel dropped as PIL convert("RGB") does', async () => {
    const width = 32;
    const height = 24;
    const rgba = new Uint8Array(width * height * 4);
    for (let i = 0; i < width * height; i++) {
      rgba.set([(i * 5) % 256, (i * 11) % 256, (i * 17) % 256, i % 2 ? 255 : 40], i * 4);
    }
    const rgb = new Uint8Array(width * height * 3);
    for (let i = 0; i < width * height; i++) rgb.set(rgba.subarray(i * 4, i * 4 + 3), i * 3);
    const png = await readResponseBody(
      await new Image({ pilmode: 'RGBA', mime_type: 'image/png' }).toHttpResponse(
        new NDArray(rgba, [height, width, 4], 'uint8'),
        null,
      ),
    );
    const data = { prompt: 'a dog', num_inference_steps: 2, strength: 0.5, seed: 5 };
    const send = async (bytes: Uint8Array, type: string) => {
      const form = new FormData();
      form.set('img', new Blob([bytes], { type }), 'in');
      form.set('data', new Blob([JSON.stringify(data)], { type: 'application/json' }));
      const res = await fetch(`${img2img.url}/img2img`, { method: 'POST', body: form });
      expect(res.status).toBe(200);
      return Buffer.from(await res.arrayBuffer());
    };
    const fromRgba = await send(png, 'image/png');
    expect(fromRgba.equals(await send(encodeBmp(rgb, width, height), 'image/bmp'))).toBe(true);
  });
});
