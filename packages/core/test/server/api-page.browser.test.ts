import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadInput, File, JSONDescriptor, NumpyNdarray, Service, sseEvent, Text } from '../../src/index.js';
import { launchChromium } from './chromium.js';
import { PlainText, start } from './helpers.js';

const svc = new Service('browser_page', { doc: 'A service for the API page test' });
svc.api({ input: new PlainText(), output: new PlainText(), doc: 'Shouts the input' }, function shout(input) {
  return `${input.toUpperCase()}!`;
});
svc.api({ input: new PlainText(), output: new PlainText() }, function reverse(input) {
  return [...input].reverse().join('');
});
svc.api(
  { input: new PlainText(), output: new PlainText(), route: '/v1/nested/route' },
  function nested(input) {
    return input;
  },
);

// Pre-filled examples: one derived from the declared shape and dtype, one given with the API.
svc.api(
  {
    input: new NumpyNdarray({ dtype: 'float64', shape: [-1, 4], enforce_shape: true }),
    output: new NumpyNdarray(),
  },
  function rows(input) {
    return input;
  },
);
svc.api(
  { input: new JSONDescriptor(), output: new JSONDescriptor(), example: { name: 'tea', cups: 2 } },
  function order(input) {
    const { name, cups } = (input ?? {}) as { name?: unknown; cups?: unknown };
    if (typeof name !== 'string' || typeof cups !== 'number') throw new BadInput('name and cups, please');
    return { ordered: `${cups} x ${name}` };
  },
);

// An event stream whose second event waits for the test: the page must show the first while the stream is open.
let release: () => void = () => {};
const released = new Promise<void>((resolve) => {
  release = resolve;
});
svc.api(
  { input: new Text(), output: new Text({ content_type: 'text/event-stream' }) },
  async function* ticks(input: string) {
    yield sseEvent({ event: 'tick', id: 0, data: `first ${input}` });
    await released;
    yield sseEvent({ event: 'done', data: { count: 2 } });
  },
);
// A file input whose example is text: the page's file chooser is pre-filled with it.
const CSV = 'a,b\n1,2\n';
svc.api(
  { input: new File({ mime_type: 'text/csv' }), output: new Text(), example: CSV },
  function csv_lines(file: { bytes: Buffer }) {
    return String(file.bytes.toString('utf8').trim().split('\n').length);
  },
);

let server: Awaited<ReturnType<typeof start>>;
let browser: Browser;
beforeAll(async () => {
  server = await start(svc);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('API page in a real browser', () => {
  it('lists every API and runs "try it out" against the server, loading nothing from elsewhere', async () => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(server.url)) foreign.push(req.url());
    });
    // The page's CSP must not block anything it needs: Chromium reports each refusal on the console.
    const refused: string[] = [];
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) refused.push(msg.text());
    });
    const answer = await page.goto(`${server.url}/`);
    expect(answer?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(answer?.headers()['x-frame-options']).toBe('DENY');
    expect(answer?.headers()['x-content-type-options']).toBe('nosniff');
    await page.locator('.opblock-summary-path').first().waitFor({ timeout: 20_000 });
    const paths = await page.locator('.opblock-summary-path').allInnerTexts();
    const listed = paths.map((p) => p.replace(/\u200b/g, '').trim());
    for (const route of ['/shout', '/reverse', '/v1/nested/route', '/livez', '/readyz', '/metrics']) {
      expect(listed).toContain(route);
    }

    const op = page.locator('#operations-Service_APIs-browser_page__shout');
    await op.locator('.opblock-summary').click();
    await op.getByRole('button', { name: 'Try it out' }).click();
    await op.locator('textarea.body-param__text').fill('hello page');
    await op.getByRole('button', { name: 'Execute' }).click();
    const responseBody = op.locator('.live-responses-table .response-col_description pre').first();
    await responseBody.waitFor({ timeout: 20_000 });
    expect(await responseBody.textContent()).toContain('HELLO PAGE!');
    const status = await op
      .locator('.live-responses-table .response .response-col_status')
      .first()
      .textContent();
    expect(status?.trim()).toBe('200');
    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await page.close();
  });

  it('pre-fills each API\'s example, which the API accepts as it is ("Try it out", then "Execute")', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/`);
    await page.locator('.opblock-summary-path').first().waitFor({ timeout: 20_000 });
    for (const [api, body, answer] of [
      ['rows', [[0, 0, 0, 0]], '[\n  [\n    0,'],
      ['order', { name: 'tea', cups: 2 }, '2 x tea'],
    ] as const) {
      const op = page.locator(`#operations-Service_APIs-browser_page__${api}`);
      await op.locator('.opblock-summary').click();
      await op.getByRole('button', { name: 'Try it out' }).click();
      const prefilled = await op.locator('textarea.body-param__text').inputValue();
      expect(JSON.parse(prefilled)).toEqual(body);
      await op.getByRole('button', { name: 'Execute' }).click();
      const status = op.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor({ timeout: 20_000 });
      expect((await status.textContent())?.trim()).toBe('200');
      const responseBody = op.locator('.live-responses-table .response-col_description pre').first();
      expect(await responseBody.textContent()).toContain(answer);
    }
    await page.close();
  });

  it("shows an event stream's events as they arrive, and pre-fills a text file input with its example", async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/`);
    await page.locator('.opblock-summary-path').first().waitFor({ timeout: 20_000 });
    const ticks = page.locator('#operations-Service_APIs-browser_page__ticks');
    await ticks.locator('.opblock-summary').click();
    await ticks.getByRole('button', { name: 'Try it out' }).click();
    await ticks.locator('textarea.body-param__text').fill('event');
    await ticks.getByRole('button', { name: 'Execute' }).click();
    const live = ticks.locator('.tiffin-live-events pre');
    // The stream is still open (its second event waits): the first is on the page already.
    await expect.poll(() => live.textContent(), { timeout: 20_000 }).toContain('data: first event');
    release();
    await expect.poll(() => live.textContent(), { timeout: 20_000 }).toContain('event: done');
    const status = ticks.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ timeout: 20_000 });
    expect((await status.textContent())?.trim()).toBe('200');

    const csv = page.locator('#operations-Service_APIs-browser_page__csv_lines');
    await csv.locator('.opblock-summary').click();
    await csv.getByRole('button', { name: 'Try it out' }).click();
    const chooser = csv.locator('input[type=file]');
    await expect
      .poll(() =>
        chooser.evaluate(
          (input) => (input as unknown as { files: Array<{ name: string }> }).files[0]?.name ?? null,
        ),
      )
      .toBe('example.csv');
    await csv.getByRole('button', { name: 'Execute' }).click();
    const body = csv.locator('.live-responses-table .response-col_description pre').first();
    await body.waitFor({ timeout: 20_000 });
    expect((await body.textContent())?.trim()).toBe('2');
    await page.close();
  });
});
