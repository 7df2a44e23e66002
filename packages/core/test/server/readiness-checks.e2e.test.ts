import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON as JSONDescriptor, Service } from '../../src/index.js';
import { start } from './helpers.js';

/**
 * Readiness checks (`svc.addReadinessCheck`): after startup, /readyz and /v2/health/ready answer 503 naming the
 * reason while a check fails (a model worker that died), and 200 again once it passes; API calls still run.
 */
let workerAlive = true;
const svc = new Service('readiness_checks');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(v) {
  return v;
});
svc.addReadinessCheck(() => true);
svc.addReadinessCheck(() => workerAlive || 'the model worker exited (code 1)');

let handle: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  handle = await start(svc);
});
afterAll(async () => {
  await handle.close();
});

describe('service readiness checks', () => {
  it('say not ready with the reason while a check fails, and ready again when it passes', async () => {
    expect((await fetch(`${handle.url}/readyz`)).status).toBe(200);
    workerAlive = false;
    const res = await fetch(`${handle.url}/readyz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: string; code: string };
    expect(body.code).toBe('SERVICE_UNAVAILABLE');
    expect(body.error).toBe('The service is not ready: the model worker exited (code 1)');
    expect((await fetch(`${handle.url}/v2/health/ready`)).status).toBe(503);
    // Probes stay distinct: the process is alive, and API calls are still answered.
    expect((await fetch(`${handle.url}/livez`)).status).toBe(200);
    const call = await fetch(`${handle.url}/echo`, { method: 'POST', body: '1' });
    expect(call.status).toBe(200);
    workerAlive = true;
    expect((await fetch(`${handle.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${handle.url}/v2/health/ready`)).status).toBe(200);
  });

  it('gives a generic reason when a check returns false', () => {
    const s = new Service('plain_false').addReadinessCheck(() => false);
    expect(s.notReadyReason()).toBe('a readiness check failed');
    expect(new Service('no_checks').notReadyReason()).toBeNull();
  });
});
