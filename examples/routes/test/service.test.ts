import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import svc from '../service.js';

let handle: ServerHandle;
const auth = { authorization: 'Bearer example-token' };

beforeAll(async () => {
  handle = await serve(svc, {
    port: 0,
    handleSignals: false,
    logger: new MemoryLogger(),
    apiToken: 'example-token',
  });
});
afterAll(() => handle.close());

describe('the routes example', () => {
  it('answers its router beside the API', async () => {
    const hello = await fetch(`${handle.url}/hello/ada`, { headers: auth });
    expect([hello.status, await hello.json()]).toEqual([200, { hello: 'ada' }]);
    const shout = await fetch(`${handle.url}/shout`, { method: 'POST', body: 'hi', headers: auth });
    expect(await shout.text()).toBe('HI');
    const docs = await fetch(`${handle.url}/docs`, { headers: auth, redirect: 'manual' });
    expect([docs.status, docs.headers.get('location')]).toEqual([302, '/']);
  });

  it('reads forms and uploads with koa-body, and answers a bad form with the JSON error body', async () => {
    const signup = await fetch(`${handle.url}/signup`, {
      method: 'POST',
      headers: auth,
      body: new URLSearchParams({ email: 'ada@example.com' }),
    });
    expect(signup.status).toBe(201);
    expect(await signup.json()).toMatchObject({ welcome: 'ada@example.com' });
    const bad = await fetch(`${handle.url}/signup`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"email": 3}',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: 'an email address is needed',
      type: 'BadInput',
      code: 'BAD_INPUT',
    });
    const form = new FormData();
    form.set('model', new Blob([new Uint8Array(2048)]), 'weights.bin');
    const upload = await fetch(`${handle.url}/upload`, { method: 'POST', headers: auth, body: form });
    expect(await upload.json()).toEqual([{ name: 'weights.bin', bytes: 2048 }]);
  });

  it('keeps the site behind the token and the webhook public', async () => {
    expect((await fetch(`${handle.url}/hello/ada`)).status).toBe(401);
    const hook = await fetch(`${handle.url}/hooks/deploy`, { method: 'POST', body: '{}' });
    expect([hook.status, await hook.json()]).toEqual([202, { queued: true }]);
  });
});
