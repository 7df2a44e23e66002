import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_MESSAGE_LENGTH, clientMessage } from '../../src/errors/client-message.js';
import { truncateForMessage } from '../../src/errors/truncate.js';
import { BadInput, JSON as JSONDescriptor, Service } from '../../src/index.js';
import { start } from '../server/helpers.js';

const svc = new Service('error_messages');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function leaky(v) {
  if (v === 'path') throw new BadInput(`cannot open ${process.cwd()}/models/secret.bin`);
  if (v === 'long') throw new BadInput(`bad value ${'x'.repeat(50_000)}`);
  throw new Error(`internal detail at ${process.cwd()}`);
});

let handle: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  handle = await start(svc);
});
afterAll(async () => {
  await handle.close();
});

const post = (body: string) =>
  fetch(`${handle.url}/leaky`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

describe('error bodies name no server paths and quote bounded user values', () => {
  it('shortens absolute paths under the server folders', async () => {
    const res = await post('"path"');
    expect(res.status).toBe(400);
    const body = await res.text();
    expect(body).not.toContain(process.cwd());
    expect(JSON.parse(body)).toMatchObject({ error: 'cannot open …/models/secret.bin', code: 'BAD_INPUT' });
  });

  it('caps the message length', async () => {
    const body = (await (await post('"long"')).json()) as { error: string };
    expect(body.error.length).toBeLessThan(CLIENT_MESSAGE_LENGTH + 50);
  });

  it('sends no stack or detail for an unexpected error', async () => {
    const res = await post('"boom"');
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(body).not.toContain(process.cwd());
    expect(body).not.toMatch(/\bat .*\.ts:\d+/);
  });

  it('truncates a user path echoed in a 404', async () => {
    const res = await fetch(`${handle.url}/${'a'.repeat(5000)}`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: string };
    expect(body.error.length).toBeLessThan(300);
    expect(body.error).toMatch(/more characters/);
  });

  it('truncateForMessage and clientMessage', () => {
    expect(truncateForMessage('short')).toBe('short');
    expect(truncateForMessage('abcdef', 3)).toBe('abc… (3 more characters)');
    expect(clientMessage(`x ${process.cwd()}/a`)).toBe('x …/a');
  });
});
