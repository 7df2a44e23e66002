import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Service } from '../../src/index.js';
import { PlainText, sleep, start } from '../server/helpers.js';

/**
 * An API's own queue over a listening server (docs/server.md, queues): calls past its `concurrency` wait, the
 * most urgent (RFC 9218 `Priority: u=`) first, each client within its share, at most `queue` of them; a call
 * whose `Tiffin-Timeout` passes while it waits is answered 504 and never runs.
 */
type Handle = Awaited<ReturnType<typeof start>>;

/** Inputs each API ran, in order; `hold:<name>` calls wait until the test lets them go. */
const runs: Record<string, string[]> = {};
const held = new Map<string, () => void>();

function api(name: string, concurrency: number, queue: number, queuePerClient?: number) {
  return {
    name,
    input: new PlainText(),
    output: new PlainText(),
    concurrency,
    queue,
    ...(queuePerClient === undefined ? {} : { queuePerClient }),
  };
}

async function body(name: string, input: string): Promise<string> {
  runs[name] ??= [];
  runs[name].push(input);
  if (input.startsWith('hold:')) await new Promise<void>((resolve) => held.set(input, resolve));
  else if (input.startsWith('sleep:')) await sleep(Number(input.slice(6)));
  return input;
}

const service = new Service('queued')
  .api(api('ordered', 1, 8, 8), (input: string) => body('ordered', input))
  .api(api('expiring', 1, 8, 8), (input: string) => body('expiring', input))
  .api(api('pooled', 1, 4), (input: string) => body('pooled', input))
  .api(api('bounded', 1, 2, 2), (input: string) => body('bounded', input))
  .api(api('measured', 1, 8, 8), (input: string) => body('measured', input))
  .api({ name: 'plain', input: new PlainText(), output: new PlainText() }, (input: string) => input);

let handle: Handle;
beforeAll(async () => {
  handle = await start(service);
});
afterAll(async () => {
  for (const release of held.values()) release();
  await handle?.close();
});

const post = (path: string, text: string, headers: Record<string, string> = {}) =>
  fetch(handle.url + path, {
    method: 'POST',
    body: text,
    headers: { 'content-type': 'text/plain', ...headers },
  });

/** POST from another loopback address: another client to the queue's share. */
function postFrom(address: string, path: string, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${handle.url}${path}`,
      { method: 'POST', localAddress: address, headers: { 'content-type': 'text/plain' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await sleep(5);
}

/** A metric's value for `api` from /metrics (0 when absent). */
async function metric(name: string, api: string): Promise<number> {
  const text = await (await fetch(`${handle.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`api_name="${api}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const depth = (api: string) => metric('tiffin_api_server_queue_depth', api);

/** Start a call that holds `api`'s one slot until `release(name)`; its answer, once it runs. */
async function hold(api: string, name: string): Promise<{ answer: Promise<Response> }> {
  const answer = post(`/${api}`, `hold:${name}`);
  await until(() => held.has(`hold:${name}`));
  return { answer };
}

function release(name: string): void {
  held.get(`hold:${name}`)?.();
  held.delete(`hold:${name}`);
}

describe('an API queue', () => {
  it('runs the most urgent waiting call first: u=7 then u=0 queued, u=0 runs first', async () => {
    const { answer: holding } = await hold('ordered', 'first');
    const low = post('/ordered', 'low', { priority: 'u=7' });
    await until(async () => (await depth('ordered')) === 1);
    const high = post('/ordered', 'high', { priority: 'u=0, i' });
    await until(async () => (await depth('ordered')) === 2);
    release('first');
    const answers = await Promise.all([holding, low, high]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(runs.ordered).toEqual(['hold:first', 'high', 'low']);
    // The wait is counted: on the Server-Timing header, and in the histogram by API.
    expect(answers[1]?.headers.get('server-timing')).toMatch(/(^|, )queue;dur=[\d.]+/);
    expect(await metric('tiffin_api_server_queue_wait_seconds_count', 'ordered')).toBe(2);
  });

  it('answers 504 to a call whose Tiffin-Timeout passes while it waits, without running it', async () => {
    const { answer: holding } = await hold('expiring', 'slot');
    const expired = await post('/expiring', 'late', { 'tiffin-timeout': '0.2' });
    expect(expired.status).toBe(504);
    expect(((await expired.json()) as { code: string }).code).toBe('DEADLINE_EXCEEDED');
    expect(await depth('expiring')).toBe(0);
    release('slot');
    expect((await holding).status).toBe(200);
    // The slot went to nobody else: the expired call never ran.
    expect(runs.expiring).toEqual(['hold:slot']);
    expect((await post('/expiring', 'next')).status).toBe(200);
    expect(runs.expiring).toEqual(['hold:slot', 'next']);
  });

  it("keeps one client to its share of the queue (a quarter), leaving room for another's", async () => {
    const { answer: holding } = await hold('pooled', 'slot');
    const mine = post('/pooled', 'mine');
    await until(async () => (await depth('pooled')) === 1);
    const refused = await post('/pooled', 'greedy');
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { code: string }).code).toBe('API_QUEUE_CLIENT_FULL');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const other = postFrom('127.0.0.2', '/pooled', 'other');
    await until(async () => (await depth('pooled')) === 2);
    release('slot');
    expect([(await holding).status, (await mine).status, await other]).toEqual([200, 200, 200]);
    expect(runs.pooled).toEqual(['hold:slot', 'mine', 'other']);
  });

  it('refuses a call past the bound with 503 API_QUEUE_FULL and a Retry-After', async () => {
    const { answer: holding } = await hold('bounded', 'slot');
    const waiting = [post('/bounded', 'a'), post('/bounded', 'b')];
    await until(async () => (await depth('bounded')) === 2);
    const refused = await post('/bounded', 'c');
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { code: string }).code).toBe('API_QUEUE_FULL');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    release('slot');
    expect((await Promise.all([holding, ...waiting])).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(runs.bounded).toEqual(['hold:slot', 'a', 'b']);
  });

  it('refuses at once (503 DEADLINE_UNREACHABLE) a call that could not start in time behind the calls ahead', async () => {
    // Four runs of at least 200 ms measured: no call of this API runs shorter.
    for (let k = 0; k < 4; k++) expect((await post('/measured', 'sleep:200')).status).toBe(200);
    const { answer: holding } = await hold('measured', 'slot');
    const ahead = [post('/measured', 'sleep:200'), post('/measured', 'sleep:200')];
    await until(async () => (await depth('measured')) === 2);
    // Two calls of >= 200 ms are ahead of it: it could not start within 0.1 s.
    const refused = await post('/measured', 'hurried', { 'tiffin-timeout': '0.1' });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { code: string }).code).toBe('DEADLINE_UNREACHABLE');
    release('slot');
    await Promise.all([holding, ...ahead]);
    expect(runs.measured).not.toContain('hurried');
  });
});

describe('over the Open Inference Protocol', () => {
  const infer = (api: string, text: string, parameters: Record<string, unknown>) =>
    fetch(`${handle.url}/v2/models/${api}/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        inputs: [{ name: 'input', datatype: 'BYTES', shape: [1], data: [text] }],
        parameters,
      }),
    });

  it('orders by parameters.priority and expires by parameters.timeout while queued, without running', async () => {
    const { answer: holding } = await hold('ordered', 'v2');
    const low = infer('ordered', 'v2-low', { priority: 7 });
    await until(async () => (await depth('ordered')) === 1);
    const high = infer('ordered', 'v2-high', { priority: 0 });
    const expired = infer('ordered', 'v2-late', { timeout: 0.2 });
    expect((await expired).status).toBe(504);
    release('v2');
    expect([(await holding).status, (await low).status, (await high).status]).toEqual([200, 200, 200]);
    expect(runs.ordered?.filter((r) => r.includes('v2'))).toEqual(['hold:v2', 'v2-high', 'v2-low']);
  });

  it.each([['x'], [-1], [0], ['1e400'], [null]])(
    'refuses parameters.timeout %j with 400 INVALID_TIMEOUT',
    async (timeout) => {
      const res = await infer('plain', 'x', { timeout });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('INVALID_TIMEOUT');
    },
  );
});

describe("a client's Priority and Tiffin-Timeout, hostile", () => {
  it.each([
    'u=99',
    'u=-1',
    'u=1.5',
    'u="0"',
    'u=0,',
    'u',
    '=,;(',
    `u=0, ${'x'.repeat(4000)}`,
    'u=00000000000000000000000',
  ])('ignores Priority: %s (the default urgency, never an error)', async (priority) => {
    const res = await post('/ordered', 'fine', { priority });
    expect(res.status).toBe(200);
  });

  it.each(['1e400', 'NaN', '-1', '0', 'Infinity', '1, 2', ' ', '9'.repeat(40)])(
    'refuses Tiffin-Timeout: %s with 400 INVALID_TIMEOUT, on any API',
    async (timeout) => {
      for (const path of ['/plain', '/ordered']) {
        const res = await post(path, 'x', { 'tiffin-timeout': timeout });
        expect(res.status).toBe(400);
        expect(((await res.json()) as { code: string }).code).toBe('INVALID_TIMEOUT');
      }
    },
  );

  it('takes a Tiffin-Timeout within the server’s', async () => {
    const res = await post('/plain', 'x', { 'tiffin-timeout': '2.5' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('x');
  });
});
