import { JSONDescriptor, Multipart, Service, serve, Text } from '@tiffin/core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Image, type TiffinImage } from '../src/index.js';

// Core's Chromium launcher (a test helper, outside this package's tsc root).
const { launchChromium } = (await import(
  new URL('../../core/test/server/chromium.ts', import.meta.url).href
)) as {
  launchChromium: () => Promise<Browser>;
};

/*
 * APIs with an Image input get an example image. /docs.json links it (the body's `externalValue`, a
 * form part's `x-tiffin-example-files`), the server serves it, and the API page pre-fills the file choosers with
 * it, so that "Try it out" → "Execute" works as it does for JSON inputs. Real Chromium, real sharp decoding.
 */

const svc = new Service('image_page')
  .api(
    { name: 'grayscale', input: new Image({ pilmode: 'L' }), output: new JSONDescriptor() },
    (img: TiffinImage) => ({ width: img.width, height: img.height, mode: img.mode }),
  )
  .api(
    {
      name: 'describe',
      input: new Multipart({ photo: new Image(), note: new Text() }),
      output: new JSONDescriptor(),
    },
    ({ photo, note }: { photo: TiffinImage; note: string }) => ({
      width: photo.width,
      height: photo.height,
      note,
    }),
  );

let server: Awaited<ReturnType<typeof serve>>;
let browser: Browser;
beforeAll(async () => {
  server = await serve(svc, { port: 0, logger: false, handleSignals: false });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface Media {
  example?: unknown;
  examples?: { example?: { externalValue?: string } };
  'x-tiffin-example-files'?: Record<string, string>;
}

describe('Image inputs have an example image', () => {
  it('/docs.json links an example the server serves: a real PNG the API decodes', async () => {
    const doc = (await (await fetch(`${server.url}/docs.json`)).json()) as {
      paths: Record<string, { post: { requestBody: { content: Record<string, Media> } } }>;
    };
    const body = doc.paths['/grayscale']!.post.requestBody.content;
    expect(Object.keys(body)[0]).toBe('image/png');
    expect(body['image/png']!.examples?.example?.externalValue).toBe('docs/examples/grayscale');
    const form = doc.paths['/describe']!.post.requestBody.content['multipart/form-data']!;
    expect(form['x-tiffin-example-files']).toEqual({ photo: 'docs/examples/describe/photo' });
    expect(form.example).toEqual({ note: 'Hello, world' });

    const file = await fetch(`${server.url}/docs/examples/grayscale`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await file.arrayBuffer());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    const answer = await fetch(`${server.url}/grayscale`, {
      method: 'POST',
      headers: { 'content-type': 'image/png' },
      body: png,
    });
    expect(await answer.json()).toEqual({ width: 64, height: 48, mode: 'L' });
    expect((await fetch(`${server.url}/docs/examples/nothing`)).status).toBe(404);
  });

  it('the API page pre-fills the file choosers, and "Execute" sends the image', async () => {
    const page = await browser.newPage();
    const warnings: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'warning' || msg.type() === 'error') warnings.push(msg.text());
    });
    await page.goto(`${server.url}/`);
    await page.locator('.opblock-summary-path').first().waitFor({ timeout: 20_000 });
    for (const [api, answer] of [
      ['grayscale', { width: 64, height: 48, mode: 'L' }],
      ['describe', { width: 64, height: 48, note: 'Hello, world' }],
    ] as const) {
      const op = page.locator(`#operations-Service_APIs-image_page__${api}`);
      await op.locator('.opblock-summary').click();
      await op.getByRole('button', { name: 'Try it out' }).click();
      const chooser = op.locator('input[type=file]');
      await expect
        .poll(
          () =>
            chooser.evaluate(
              (input) => (input as unknown as { files: Array<{ name: string }> }).files[0]?.name ?? null,
            ),
          {
            timeout: 20_000,
          },
        )
        .toBe('example.png');
      await op.getByRole('button', { name: 'Execute' }).click();
      const status = op.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor({ timeout: 20_000 });
      expect((await status.textContent())?.trim(), api).toBe('200');
      const responseBody = op.locator('.live-responses-table .response-col_description pre').first();
      expect(JSON.parse((await responseBody.textContent()) ?? ''), api).toEqual(answer);
    }
    expect(warnings).toEqual([]);
    await page.close();
  }, 90_000);
});
