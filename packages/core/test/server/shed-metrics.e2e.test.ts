import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSONDescriptor, Service } from '../../src/index.js';
import { PlainText, sleep, start } from './helpers.js';

/**
 * Work the server sheds or times out is counted on `/metrics` by API and error code
 * (`tiffin_api_server_shed_total{api_name,code}`), fed where the error answer is written: the concurrency
 * gate's 503, the event-stream cap's 503 and the deadline's 504, each provoked over a listening server.
 */
type Handle = Awaited<ReturnType<typeof start>>;

function service(): Service {
  return new Service('shed')
    .api({ input: new PlainText(), output: new PlainText(), timeout: 0.3 }, async function wait(input, ctx) {
      const end = Date.now() + Number(input || '0');
      while (Date.now() < end && !ctx.request.signal.aborted) await sleep(10);
      return input;
    })
    .api(
      { name: 'steps', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
      async (input, ctx) => {
        const { steps } = input as { steps: number };
        for (let k = 1; k <= steps && !ctx.request.signal.aborted; k++) {
          await sleep(20);
          ctx.progress(k, steps);
        }
        return { steps };
      },
    );
}

let handle: Handle;
beforeAll(async () => {
  handle = await start(service(), { maxConcurrency: 2, maxStreams: 1 });
});
afterAll(async () => {
  await handle?.close();
});

const post = (path: string, body: string, type = 'text/plain') =>
  fetch(handle.url + path, { method: 'POST', body, headers: { 'content-type': type } });

/** The shed counter's value for (api, code), 0 when the series is absent. */
async function shed(api: string, code: string): Promise<number> {
  const text = await (await fetch(`${handle.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('tiffin_api_server_shed_total{') &&
        l.includes(`api_name="${api}"`) &&
        l.includes(`code="${code}"`),
    );
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('tiffin_api_server_shed_total', () => {
  it('counts the concurrency gate 503s by API and code', async () => {
    const before = await shed('wait', 'SERVICE_UNAVAILABLE');
    // Two calls hold both permits (each ends at its 0.3 s deadline); the next ones are shed.
    const holding = [post('/wait', '250'), post('/wait', '250')];
    await sleep(50);
    const refused = await Promise.all([post('/wait', '0'), post('/wait', '0'), post('/wait', '0')]);
    const statuses = refused.map((r) => r.status);
    await Promise.all([...holding, ...refused.map((r) => r.text())]);
    const shedNow = statuses.filter((s) => s === 503).length;
    expect(shedNow).toBeGreaterThan(0);
    expect((await shed('wait', 'SERVICE_UNAVAILABLE')) - before).toBe(shedNow);
  });

  it('counts deadline 504s as DEADLINE_EXCEEDED', async () => {
    const before = await shed('wait', 'DEADLINE_EXCEEDED');
    const res = await post('/wait', '5000');
    expect(res.status).toBe(504);
    expect(((await res.json()) as { code: string }).code).toBe('DEADLINE_EXCEEDED');
    expect((await shed('wait', 'DEADLINE_EXCEEDED')) - before).toBe(1);
  });

  it('counts the event-stream cap 503s', async () => {
    const submitted = await post('/steps/submit', JSON.stringify({ steps: 100 }), 'application/json');
    const { id } = (await submitted.json()) as { id: string };
    // One stream holds the only slot; the next is refused.
    const controller = new AbortController();
    const first = await fetch(`${handle.url}/steps/events?id=${id}`, { signal: controller.signal });
    expect(first.status).toBe(200);
    const second = await fetch(`${handle.url}/steps/events?id=${id}`);
    expect(second.status).toBe(503);
    const { code } = (await second.json()) as { code: string };
    controller.abort();
    await first.body?.cancel().catch(() => {});
    const text = await (await fetch(`${handle.url}/metrics`)).text();
    const series = text.split('\n').filter((l) => l.startsWith('tiffin_api_server_shed_total{'));
    expect(series.some((l) => l.includes(`code="${code}"`) && l.includes('steps'))).toBe(true);
  });

  it('does not count answers that shed nothing (a 404, a 400)', async () => {
    await fetch(`${handle.url}/nope`);
    const text = await (await fetch(`${handle.url}/metrics`)).text();
    expect(text).not.toMatch(/tiffin_api_server_shed_total\{[^}]*code="NOT_FOUND"/);
  });
});
