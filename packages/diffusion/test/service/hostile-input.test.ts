/**
 * The diffusion service under hostile input, on the tiny random pipeline: valid text2img and img2img requests
 * with one to three places broken (a wrong type, an out-of-range value, a field gone), malformed, deep, huge and
 * non-ASCII bodies, broken multipart uploads and image bombs. The answer is a 200 or a 4xx with the one error
 * body (a stable `code`, no stack trace or server path), never a 5xx; the service keeps generating and logs no
 * error of its own. Requests go one at a time: the queue's 503 under load is its own test.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { tinyDir } from '../helpers/tiny.js';
import { writeTinyLora } from './service-helpers.js';

const work = mkdtempSync(join(tmpdir(), 'tiffin-sd-hostile-'));
const loraDir = join(work, 'loras');
const logger = new MemoryLogger();
const LIMITS = { maxSize: 32, maxSteps: 3, maxImages: 2, maxPromptLength: 2000, maxLoras: 2 };

let text2img: ServerHandle;
let img2img: ServerHandle;
let sdxl: ServerHandle;

beforeAll(async () => {
  writeTinyLora(loraDir, 'style.safetensors', 'style');
  const common = { modelDir: tinyDir('sd1'), loraDir, backend: 'wasm' as const, limits: LIMITS, logger };
  const options = { port: 0, host: '127.0.0.1', logger, handleSignals: false, maxBodySize: 2 * 1024 * 1024 };
  text2img = await serve(createDiffusionService(common).service, options);
  img2img = await serve(createDiffusionService({ ...common, pipeline: 'img2img' }).service, options);
  sdxl = await serve(createDiffusionService({ ...common, modelDir: tinyDir('sdxl') }).service, options);
}, 120_000);

afterAll(async () => {
  await text2img?.close();
  await img2img?.close();
  await sdxl?.close();
});

interface Answer {
  status: number;
  text: string;
}

async function answer(res: Response): Promise<Answer> {
  const type = res.headers.get('content-type') ?? '';
  // Images are not read as text; an error body always is JSON.
  const text = type.startsWith('application/json') ? await res.text() : '';
  if (!text) await res.arrayBuffer();
  return { status: res.status, text };
}

const post = (body: string | Uint8Array, type = 'application/json'): Promise<Response> =>
  fetch(`${text2img.url}/text2img`, { method: 'POST', body, headers: { 'content-type': type } });

const postJson = async (body: string | Uint8Array, type?: string): Promise<Answer> =>
  answer(await post(body, type));

const postForm = async (form: FormData): Promise<Answer> =>
  answer(await fetch(`${img2img.url}/img2img`, { method: 'POST', body: form }));

/** No 5xx; a 4xx carries the one error body and nothing of the server's insides. */
function expectClientAnswer(got: Answer, what: string): void {
  expect(got.status, `${what} → ${got.status} ${got.text.slice(0, 300)}`).toBeLessThan(500);
  if (got.status >= 400) {
    const body = JSON.parse(got.text) as { error?: unknown; code?: unknown };
    expect(typeof body.error, what).toBe('string');
    expect(body.code, what).toMatch(/^[A-Z_]+$/);
    expect(got.text, what).not.toMatch(/\n\s+at |node_modules|\/src\/|\.ts:\d|tiffin-sd-hostile/);
  }
}

/** Anything JSON holds, with the values that break numeric checks (NaN and ±∞ arrive as null). */
const anyJson = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -1,
    0.5,
    7,
    8.5,
    2 ** 31,
    2 ** 53,
    -(2 ** 63),
    1e308,
    '',
    '8',
    'é',
    '💥',
  ),
  fc.double(),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.array(fc.integer({ min: -2, max: 40 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
);

/** A request the service accepts: every field in bounds, LoRAs named as the directory lists them. */
const validParameters = fc.record(
  {
    prompt: fc.string({ unit: 'binary', maxLength: 40 }),
    negative_prompt: fc.option(fc.string({ maxLength: 20 })),
    height: fc.constantFrom(8, 16, 24),
    width: fc.constantFrom(8, 16),
    num_inference_steps: fc.integer({ min: 1, max: 2 }),
    guidance_scale: fc.double({ min: 0, max: 50, noNaN: true }),
    eta: fc.double({ min: 0, max: 1, noNaN: true }),
    seed: fc.option(fc.integer({ min: 0, max: 2 ** 32 - 1 })),
    scheduler: fc.option(fc.constantFrom('ddim', 'pndm', 'euler', 'lms')),
    num_images_per_prompt: fc.constantFrom(1, 2),
    guidance_rescale: fc.double({ min: 0, max: 1, noNaN: true }),
    clip_skip: fc.integer({ min: 0, max: 2 }),
    prompt_weighting: fc.boolean(),
    lora_weights: fc.option(
      fc.oneof(fc.constant('style.safetensors'), fc.constant([{ path: 'style.safetensors', weight: 0.5 }])),
    ),
    strength: fc.double({ min: 0, max: 1, noNaN: true }),
  },
  { requiredKeys: ['prompt'] },
);

const DELETE = Symbol('delete');

/** Every place in a JSON value (object keys, array indices) as a path from the root. */
function placesIn(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [];
  const keys: Array<string | number> = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return keys.flatMap((k) => [
    [...prefix, k],
    ...placesIn((value as Record<string | number, unknown>)[k], [...prefix, k]),
  ]);
}

/** `value` with the place at `path` replaced by `replacement`, or removed. */
function withPlace(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (replacement !== DELETE) parent[last] = replacement;
  else if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete parent[last];
  return copy;
}

/** A valid request with up to three places broken. */
const brokenParameters = fc
  .tuple(
    validParameters,
    fc.array(fc.tuple(fc.nat(), fc.oneof(anyJson, fc.constant(DELETE))), { maxLength: 3 }),
  )
  .map(([valid, breaks]) => {
    let body: unknown = valid;
    for (const [at, replacement] of breaks) {
      const places = placesIn(body);
      if (places.length > 0) body = withPlace(body, places[at % places.length]!, replacement);
    }
    return body;
  });

/** A PNG signature and IHDR declaring `width`×`height`, then nothing: a decompression bomb's header. */
function pngHeader(width: number, height: number): Uint8Array {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'latin1');
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  ihdr.set([8, 2, 0, 0, 0], 16);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr]);
}

describe('POST /text2img under hostile input', () => {
  it('valid requests with up to three places broken: 200 or a 4xx, never a 5xx', async () => {
    let generated = 0;
    await fc.assert(
      fc.asyncProperty(brokenParameters, async (body) => {
        const got = await postJson(JSON.stringify(body));
        if (got.status === 200) generated++;
        expectClientAnswer(got, JSON.stringify(body).slice(0, 300));
      }),
      { numRuns: 120 },
    );
    // Some survived their breaks (a field dropped to its default): the property reached the generator.
    expect(generated).toBeGreaterThan(0);
  }, 120_000);

  it('malformed, deep, huge and non-ASCII bodies', async () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const cases: Array<[string, string | Uint8Array, string?]> = [
      ['empty', ''],
      ['not JSON', '{prompt: cat}'],
      ['truncated', '{"prompt":"a cat","height":1'],
      ['a list', '["a cat"]'],
      ['deep', `{"prompt":${deep(100_000)}}`],
      ['deep object', `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`],
      ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x70, 0xff, 0xfe, 0x22, 0x7d])],
      ['BOM', '\ufeff{"prompt":"a cat","height":8,"width":8,"num_inference_steps":1}'],
      ['a prompt of 1 MB', JSON.stringify({ prompt: 'cat '.repeat(256 * 1024), height: 8, width: 8 })],
      [
        'a prompt of control characters',
        JSON.stringify({ prompt: '\u0000\u0007\u001b[31m\u202e', width: 8 }),
      ],
      ['a prompt in many scripts', JSON.stringify({ prompt: '猫 كلب 🐈‍⬛ Ώ ﷽', height: 8, width: 8 })],
      [
        'prompt weighting: brackets 900 deep, huge and broken weights, escapes, BREAK',
        JSON.stringify({
          prompt: `${'('.repeat(900)}cat${')'.repeat(900)} (a:1e308) (b:${'9'.repeat(400)}) [c (d:-1e3 BREAK`,
          negative_prompt: ')]\\(:NaN) (e:1.2.3) 猫 [[(💥:0)',
          height: 8,
          width: 8,
        }),
      ],
      ['a body over the limit', JSON.stringify({ prompt: 'x'.repeat(3 * 1024 * 1024) })],
      ['a wrong content type', '{"prompt":"a cat"}', 'text/plain'],
      ['a seed past 2^53', '{"prompt":"a cat","seed":123456789012345678901234567890}'],
    ];
    for (const [what, body, type] of cases) expectClientAnswer(await postJson(body, type), what);
  }, 120_000);
});

describe('the bounds hold for what a request leaves out or overdoes', () => {
  it('a request without num_inference_steps runs at most --max-steps (the default of 50 is lowered to it)', async () => {
    const res = await post(JSON.stringify({ prompt: 'a cat', height: 8, width: 8 }));
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const requestId = res.headers.get('x-request-id');
    const steps = logger.records.filter((r) => r.msg === 'generation step' && r.requestId === requestId);
    expect(steps.map((r) => r.step)).toEqual([1, 2, 3]);
  });

  it('a prompt or negative prompt over the length limit is a 400 naming the field', async () => {
    for (const field of ['prompt', 'negative_prompt']) {
      const body = { prompt: 'a cat', height: 8, width: 8, [field]: 'cat '.repeat(501) };
      const got = await postJson(JSON.stringify(body));
      expect(got.status).toBe(400);
      expect(JSON.parse(got.text).error).toMatch(new RegExp(`(^|: )${field}: `));
    }
    const atLimit = await postJson(JSON.stringify({ prompt: 'x'.repeat(2000), height: 8, width: 8 }));
    expect(atLimit.status).toBe(200);
  });
});

/** SDXL's second prompts and micro-conditioning with valid values (docs: the diffusion API page). */
const validSdxlFields = fc.record(
  {
    prompt_2: fc.option(fc.string({ unit: 'binary', maxLength: 40 })),
    negative_prompt: fc.string({ maxLength: 20 }),
    negative_prompt_2: fc.option(fc.string({ maxLength: 20 })),
    original_size: fc.option(
      fc.tuple(fc.integer({ min: 1, max: 16_384 }), fc.integer({ min: 1, max: 16_384 })),
    ),
    crops_coords_top_left: fc.option(fc.tuple(fc.nat(16_384), fc.nat(16_384))),
    target_size: fc.option(fc.tuple(fc.integer({ min: 1, max: 4096 }), fc.integer({ min: 1, max: 4096 }))),
    negative_original_size: fc.tuple(fc.integer({ min: 1, max: 4096 }), fc.integer({ min: 1, max: 4096 })),
    negative_crops_coords_top_left: fc.option(fc.tuple(fc.nat(64), fc.nat(64))),
    negative_target_size: fc.tuple(fc.integer({ min: 1, max: 4096 }), fc.integer({ min: 1, max: 4096 })),
  },
  { requiredKeys: [] },
);

/** An SDXL text2img request (one step, small) with its SDXL fields, up to three places broken. */
const brokenSdxlParameters = fc
  .tuple(
    validSdxlFields,
    fc.array(fc.tuple(fc.nat(), fc.oneof(anyJson, fc.constant(DELETE))), { maxLength: 3 }),
  )
  .map(([fields, breaks]) => {
    let body: unknown = { prompt: 'a cat', height: 8, width: 8, num_inference_steps: 1, ...fields };
    for (const [at, replacement] of breaks) {
      const places = placesIn(body);
      if (places.length > 0) body = withPlace(body, places[at % places.length]!, replacement);
    }
    return body;
  });

const SIZE_FIELDS = ['original_size', 'target_size', 'negative_original_size', 'negative_target_size'];
const OFFSET_FIELDS = ['crops_coords_top_left', 'negative_crops_coords_top_left'];
const SDXL_PROMPT_FIELDS = ['prompt_2', 'negative_prompt_2'];

/** Answers of the SDXL service's synchronous API and of its task submit, for one body. */
async function sdxlAnswers(body: unknown): Promise<Array<[string, Answer]>> {
  const send = (path: string) =>
    fetch(`${sdxl.url}${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
  return [
    ['/text2img', await answer(await send('/text2img'))],
    ['/text2img/submit', await answer(await send('/text2img/submit'))],
  ];
}

/** A 400 `BAD_INPUT` whose detail names `field`, with the one error body. */
function expectFieldRefused(got: Answer, field: string, what: string): { error: string } {
  expectClientAnswer(got, what);
  expect(got.status, what).toBe(400);
  const body = JSON.parse(got.text) as { error: string; code: string; detail: Array<{ path: unknown[] }> };
  expect(body.code, what).toBe('BAD_INPUT');
  expect(
    body.detail.map((i) => i.path[0]),
    what,
  ).toContain(field);
  return body;
}

describe('SDXL request fields under hostile input (a tiny SDXL model)', () => {
  const small = { prompt: 'a cat', height: 8, width: 8, num_inference_steps: 1, seed: 1 };

  it('bad sizes, offsets and second prompts: a 400 BAD_INPUT naming the field, on the API and on task submit', async () => {
    const notPairs = [
      32,
      '32x32',
      [],
      [32],
      [32, 32, 32],
      { height: 32, width: 32 },
      [null, 32],
      [true, 32],
      ['32', '32'],
    ];
    const cases: Array<[string, unknown]> = [
      ...SIZE_FIELDS.flatMap((f) =>
        [
          [2 ** 40, 2 ** 40],
          [32, 2 ** 40],
          [-8, 32],
          [0, 32],
          [32.5, 32],
          [1e308, 1],
          [2 ** 53 + 2, 1],
          ...notPairs,
        ].map((v): [string, unknown] => [f, v]),
      ),
      ...OFFSET_FIELDS.flatMap((f) =>
        [[-1, 0], [0, 2 ** 40], [0.5, 0], [16_385, 0], ...notPairs].map((v): [string, unknown] => [f, v]),
      ),
      ...SDXL_PROMPT_FIELDS.flatMap((f) =>
        [7, ['a cat'], { text: 'a cat' }, 'x'.repeat(LIMITS.maxPromptLength + 1), true].map(
          (v): [string, unknown] => [f, v],
        ),
      ),
    ];
    for (const [field, value] of cases)
      for (const [api, got] of await sdxlAnswers({ ...small, negative_prompt: '', [field]: value }))
        expectFieldRefused(got, field, `${api} ${field}: ${JSON.stringify(value).slice(0, 40)}`);
  }, 120_000);

  it('fields diffusers would silently ignore are refused, saying what to send instead', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ negative_original_size: [16, 16] }, 'negative_target_size', /go together/],
      [{ negative_target_size: [16, 16] }, 'negative_original_size', /go together/],
      [
        { negative_crops_coords_top_left: [0, 8] },
        'negative_crops_coords_top_left',
        /needs negative_original_size/,
      ],
      [{ negative_prompt_2: 'blurry' }, 'negative_prompt_2', /needs negative_prompt.*negative_prompt ""/],
    ];
    for (const [fields, field, message] of cases)
      for (const [api, got] of await sdxlAnswers({ ...small, ...fields }))
        expect(expectFieldRefused(got, field, `${api} ${JSON.stringify(fields)}`).error).toMatch(message);
  });

  it('accepts every field at its bounds, non-ASCII second prompts and nulls, and each changes the image', async () => {
    const send = async (fields: Record<string, unknown>) => {
      const res = await fetch(`${sdxl.url}/text2img`, {
        method: 'POST',
        body: JSON.stringify({ ...small, negative_prompt: 'blurry', ...fields }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, JSON.stringify(fields)).toBe(200);
      return Buffer.from(await res.arrayBuffer());
    };
    const base = await send({});
    const nulls = Object.fromEntries(
      [...SIZE_FIELDS, ...OFFSET_FIELDS, ...SDXL_PROMPT_FIELDS].map((f) => [f, null]),
    );
    expect((await send(nulls)).equals(base)).toBe(true);
    for (const fields of [
      { prompt_2: '猫 كلب 🐈‍⬛ Ώ ﷽ \u0000' },
      { negative_prompt_2: 'ünïcode ☕' },
      { original_size: [16_384, 1] },
      { crops_coords_top_left: [16_384, 0] },
      { target_size: [1, 1] },
      {
        negative_original_size: [1, 16_384],
        negative_target_size: [16_384, 1],
        negative_crops_coords_top_left: [0, 0],
      },
    ])
      expect((await send(fields)).equals(base), JSON.stringify(fields)).toBe(false);
    const [, submitted] = await sdxlAnswers({ ...small, prompt_2: 'a dog', original_size: [64, 64] });
    expect(submitted[1].status).toBe(202);
  }, 120_000);

  it('valid SDXL requests with up to three places broken: 200 or a 4xx, never a 5xx', async () => {
    let generated = 0;
    await fc.assert(
      fc.asyncProperty(brokenSdxlParameters, async (body) => {
        const got = await answer(
          await fetch(`${sdxl.url}/text2img`, {
            method: 'POST',
            body: JSON.stringify(body),
            headers: { 'content-type': 'application/json' },
          }),
        );
        if (got.status === 200) generated++;
        expectClientAnswer(got, JSON.stringify(body).slice(0, 300));
      }),
      { numRuns: 40 },
    );
    expect(generated).toBeGreaterThan(0);
  }, 120_000);
});

describe('an SD 1.x model and the SDXL fields', () => {
  it('refuses each with a 400 BAD_INPUT saying it is an SDXL parameter (diffusers would ignore it); null is not given', async () => {
    const values: Record<string, unknown> = {
      prompt_2: 'a dog',
      negative_prompt_2: 'blurry',
      original_size: [64, 64],
      crops_coords_top_left: [0, 0],
      target_size: [16, 16],
      negative_original_size: [16, 16],
      negative_crops_coords_top_left: [0, 0],
      negative_target_size: [16, 16],
    };
    for (const [field, value] of Object.entries(values)) {
      const got = await postJson(JSON.stringify({ prompt: 'a cat', height: 8, width: 8, [field]: value }));
      const body = expectFieldRefused(got, field, field);
      expect(body.error).toMatch(new RegExp(`${field} is an SDXL parameter`));
    }
    const nulls = Object.fromEntries(Object.keys(values).map((f) => [f, null]));
    const res = await post(
      JSON.stringify({ prompt: 'a cat', height: 8, width: 8, num_inference_steps: 1, ...nulls }),
    );
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });
});

describe('POST /img2img under hostile input', () => {
  it('broken uploads and parameters: never a 5xx', async () => {
    const form = (img: Uint8Array | null, data: string | null, type = 'application/json') => {
      const f = new FormData();
      if (img) f.set('img', new Blob([img], { type: 'image/png' }), 'in.png');
      if (data !== null) f.set('data', new Blob([data], { type }));
      return f;
    };
    const params = JSON.stringify({ prompt: 'a dog', num_inference_steps: 2, strength: 0.5 });
    const noise = fc.sample(fc.uint8Array({ minLength: 1, maxLength: 512 }), { numRuns: 20, seed: 3 });
    const cases: Array<[string, FormData]> = [
      ['no image', form(null, params)],
      ['no parameters', form(pngHeader(16, 16), null)],
      ['an image bomb header', form(pngHeader(100_000, 100_000), params)],
      ['a zero-size image header', form(pngHeader(0, 0), params)],
      ['a truncated PNG', form(pngHeader(16, 16), params)],
      ['parameters not JSON', form(pngHeader(16, 16), '{prompt')],
      ['parameters as text', form(pngHeader(16, 16), params, 'text/plain')],
      ['strength out of range', form(pngHeader(16, 16), JSON.stringify({ prompt: 'x', strength: 2 }))],
      ...noise.map((bytes, i): [string, FormData] => [`noise ${i}`, form(bytes, params)]),
    ];
    for (const [what, body] of cases) expectClientAnswer(await postForm(body), what);
    const bare = await fetch(`${img2img.url}/img2img`, {
      method: 'POST',
      body: '--x\r\ncontent-disposition: form-data; name="img"\r\n\r\nabc',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    });
    expectClientAnswer(await answer(bare), 'unterminated multipart');
  }, 120_000);
});

describe('after all of it', () => {
  it('still generates, and logged no error of its own', async () => {
    const res = await post(
      JSON.stringify({ prompt: 'a cat', height: 16, width: 16, num_inference_steps: 2, seed: 1 }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    const errors = logger.records.filter((r) => r.level === 'error');
    expect(errors.map((r) => `${r.msg}: ${String(r.error)}`)).toEqual([]);
  });
});
