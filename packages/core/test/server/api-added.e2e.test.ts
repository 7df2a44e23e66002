import { afterEach, describe, expect, it } from 'vitest';
import { Service, Text } from '../../src/index.js';
import type { ServerHandle } from '../../src/server/serve.js';
import { start } from './helpers.js';

/**
 * An API registered on a service that is already serving (what a model repository does with a model copied into
 * its folder, docs/model-repository.md): the running server routes it, lists it on the API page, counts it.
 */

let server: ServerHandle | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (path: string, body: string) =>
  fetch(`${server!.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'text/plain' } });

describe('Service.api() while serving', () => {
  it('is routed, counted, and shown by /docs.json from then on', async () => {
    const svc = new Service('growing');
    svc.api({ input: new Text(), output: new Text() }, function first(text) {
      return `first:${text}`;
    });
    server = await start(svc);
    expect((await post('/late', 'x')).status).toBe(404);
    const before = (await (await fetch(`${server.url}/docs.json`)).json()) as { paths: object };
    expect(Object.keys(before.paths)).not.toContain('/late');

    svc.api(
      { name: 'late', route: '/late', input: new Text(), output: new Text() },
      (text) => `late:${text}`,
    );
    const res = await post('/late', 'x');
    expect([res.status, await res.text()]).toEqual([200, 'late:x']);
    expect(await (await post('/first', 'y')).text()).toBe('first:y');
    const after = (await (await fetch(`${server.url}/docs.json`)).json()) as { paths: object };
    expect(Object.keys(after.paths)).toContain('/late');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/"\/late"/);
  });
});
