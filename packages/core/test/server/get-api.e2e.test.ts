import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpRequest } from '../../src/index.js';
import { Service } from '../../src/index.js';
import { PlainText, start } from './helpers.js';

/** An input descriptor that reads the query string: its API is a GET route. */
class QueryText extends PlainText {
  override get httpMethods(): readonly string[] {
    return ['GET'];
  }
  override async fromHttpRequest(request: HttpRequest): Promise<string> {
    return request.query.get('name') ?? '';
  }
}

const svc = new Service('get_api');
svc.api({ input: new QueryText(), output: new PlainText() }, function hello(name) {
  return `hello ${name}`;
});
svc.api({ input: new PlainText(), output: new PlainText() }, function echo(text) {
  return text;
});

let server: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  server = await start(svc);
});
afterAll(async () => {
  await server?.close();
});

describe("an API's methods come from its input descriptor", () => {
  it('serves a GET API from the query string, and refuses POST on it', async () => {
    const res = await fetch(`${server.url}/hello?name=ada`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello ada');
    const post = await fetch(`${server.url}/hello`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect((await fetch(`${server.url}/echo`, { method: 'POST', body: 'x' })).status).toBe(200);
  });

  it('documents the GET operation without a request body', async () => {
    const doc = (await (await fetch(`${server.url}/docs.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: unknown }>>;
    };
    expect(Object.keys(doc.paths['/hello'])).toEqual(['get']);
    expect(doc.paths['/hello'].get.requestBody).toBeUndefined();
    expect(doc.paths['/echo'].post.requestBody).toBeDefined();
  });
});
