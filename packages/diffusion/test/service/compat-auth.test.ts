import type { ServerHandle } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTiny } from './compat-helpers.js';

/**
 * The compatible APIs as route groups (docs/a1111-api.md, docs/openai-images-api.md): A1111's `/sdapi/v1/*` opened
 * by its `--api-auth` Basic users or the service's token, every refusal a 401 with `WWW-Authenticate: Basic` in
 * A1111's body; OpenAI's `/v1` by the token alone, its errors in OpenAI's shape; the native routes by the token.
 * No generation runs: every call here is answered before one would start.
 */
const TOKEN = 'compat-auth-token';
const USERS = ['ann:secret', 'bo:pa:ss'];
let handle: ServerHandle;

beforeAll(async () => {
  handle = await serveTiny({ a1111ApiAuth: USERS }, { apiToken: TOKEN });
}, 120_000);

afterAll(async () => {
  await handle?.close();
});

const basic = (pair: string) => `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;

async function call(path: string, authorization?: string, init: RequestInit = {}) {
  const headers: Record<string, string> = authorization ? { authorization } : {};
  const res = await fetch(`${handle.url}${path}`, {
    ...init,
    headers: { ...headers, ...(init.headers ?? {}) },
  });
  // A1111's `{error, detail, body, errors}` or OpenAI's `{error: {…}}`.
  const body = (await res.json()) as { error: unknown; detail?: string; body?: string; errors?: string };
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body };
}

describe("A1111's --api-auth", () => {
  it('opens /sdapi/v1 for each listed user:pass and for the bearer token', async () => {
    for (const pair of USERS) expect((await call('/sdapi/v1/progress', basic(pair))).status, pair).toBe(200);
    expect((await call('/sdapi/v1/progress', `Bearer ${TOKEN}`)).status).toBe(200);
  });

  it('answers missing, wrong and hostile credentials with a 401, WWW-Authenticate: Basic, in A1111’s shape', async () => {
    const hostile = [
      undefined,
      basic('ann:wrong'),
      basic('ann'),
      basic('mallory:secret'),
      'Basic %%%not-base64%%%',
      `Basic ${'QUJD'.repeat(2500)}`,
      'Bearer wrong-token',
    ];
    for (const authorization of hostile) {
      const denied = await call('/sdapi/v1/progress', authorization);
      expect(denied.status, String(authorization).slice(0, 30)).toBe(401);
      expect(denied.challenge).toMatch(/^Basic realm=/);
      expect(denied.body).toEqual({
        error: 'UNAUTHORIZED',
        detail: expect.any(String),
        body: '',
        errors: '',
      });
    }
  });

  it('keeps A1111’s 422, 404 and 405 in its shape for an authenticated caller', async () => {
    const json = { 'content-type': 'application/json' };
    const bad = await call('/sdapi/v1/txt2img', basic('ann:secret'), {
      method: 'POST',
      headers: json,
      body: '{"prompt": ',
    });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body).sort()).toEqual(['body', 'detail', 'error', 'errors']);
    const field = await call('/sdapi/v1/txt2img', basic('ann:secret'), {
      method: 'POST',
      headers: json,
      body: '{"prompt":"x","seed":"abc"}',
    });
    expect(field.status).toBe(422);
    expect(field.body.detail).toMatch(/seed/);
    expect((await call('/sdapi/v1/no-such-route', basic('ann:secret'))).body.error).toBe('NOT_FOUND');
    expect((await call('/sdapi/v1/txt2img', basic('ann:secret'))).status).toBe(405);
  });

  it('opens neither the OpenAI routes nor the native ones: those take the token', async () => {
    const openai = await call('/v1/models', basic('ann:secret'));
    expect(openai.status).toBe(401);
    expect(openai.body.error).toMatchObject({ code: 'invalid_api_key', type: 'invalid_authentication' });
    expect((await call('/v1/models', `Bearer ${TOKEN}`)).status).toBe(200);
    expect((await call('/v1/no-such-route', `Bearer ${TOKEN}`)).body.error).toMatchObject({
      code: 'not_found',
    });
    // url results stay public like OpenAI's own: an unknown id is a 404 in its shape, with no token.
    expect((await call('/v1/images/results/nope')).body.error).toMatchObject({ code: 'not_found' });
    expect((await call('/defaults', basic('ann:secret'))).status).toBe(401);
  });
});
