import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Service } from '../../src/index.js';
import { PlainText, start } from './helpers.js';

const svc = new Service('cors');
svc.api({ input: new PlainText(), output: new PlainText() }, function echo(input) {
  return input;
});

const cors = {
  enabled: true,
  access_control_allow_origins: ['http://example.test:8080', 'https://example.test:8080'],
  access_control_allow_methods: ['GET', 'OPTIONS', 'POST', 'HEAD', 'PUT'],
  access_control_allow_credentials: true,
  access_control_expose_headers: 'Content-Length',
};

let enabled: Awaited<ReturnType<typeof start>>;
let disabled: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  enabled = await start(svc, { cors });
  disabled = await start(svc);
});
afterAll(async () => {
  await enabled.close();
  await disabled.close();
});

const preflight = (url: string, origin: string) =>
  fetch(`${url}/echo`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'Content-Type',
    },
  });

describe('CORS (docs/spec/io-descriptors.md §10.6)', () => {
  it('answers an allowed preflight (case 66)', async () => {
    const res = await preflight(enabled.url, 'http://example.test:8080');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('OK');
    expect(res.headers.get('access-control-allow-origin')).toBe('http://example.test:8080');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, OPTIONS, POST, HEAD, PUT');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('access-control-allow-headers')).toBe(
      'Accept, Accept-Language, Content-Language, Content-Type',
    );
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
  });

  it('decorates a simple request from an allowed origin (case 67)', async () => {
    const res = await fetch(`${enabled.url}/echo`, {
      method: 'POST',
      body: 'hi',
      headers: { origin: 'http://example.test:8080', 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hi');
    expect(res.headers.get('access-control-allow-origin')).toBe('http://example.test:8080');
    expect(res.headers.get('access-control-expose-headers')).toBe('Content-Length');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('vary')).toBe('Origin');
  });

  it('refuses a preflight from another origin with a 400 JSON error; simple requests get no allow-origin (case 68)', async () => {
    const res = await preflight(enabled.url, 'http://example.test');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'Disallowed CORS origin',
      type: 'BadInput',
      code: 'BAD_INPUT',
    });
    const simple = await fetch(`${enabled.url}/echo`, {
      method: 'POST',
      body: 'hi',
      headers: { origin: 'http://example.test', 'content-type': 'text/plain' },
    });
    expect(simple.status).toBe(200);
    expect(await simple.text()).toBe('hi');
    expect(simple.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('names each refused part of a preflight', async () => {
    const res = await fetch(`${enabled.url}/echo`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://nope.test',
        'access-control-request-method': 'DELETE',
        'access-control-request-headers': 'X-Secret',
      },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('Disallowed CORS origin, method, headers');
  });

  it('is off by default: a preflight is a plain 405 with allow: POST (case 69)', async () => {
    const res = await preflight(disabled.url, 'http://example.test:8080');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
