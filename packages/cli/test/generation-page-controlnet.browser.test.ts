import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyControlNet, writeTinyPipeline } from '@tiffin/diffusion/testing';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../core/test/server/chromium.js';
import { type CollectedProcess, spawnTiffin } from './cli-process.js';

/**
 * The generation page's ControlNet panel in a real Chromium, on `tiffin diffusion start … --controlnet
 * edges=<folder>` with the tests' tiny model and a tiny ControlNet: the panel offers the ControlNets of `GET
 * /models`, its picture goes with the request as a `controlnet` unit (and not into the history), the answer is the
 * guided image, and the page stays accessible (axe-core).
 */
let proc: CollectedProcess;
let url: string;
let browser: Browser;

beforeAll(async () => {
  const model = writeTinyPipeline(mkdtempSync(join(tmpdir(), 'tiffin-page-cn-model-')));
  const edges = writeTinyControlNet(mkdtempSync(join(tmpdir(), 'tiffin-page-cn-')), { seed: 'a' });
  proc = spawnTiffin(
    [
      'diffusion',
      'start',
      'stable-diffusion',
      '--model-id',
      model,
      '--controlnet',
      `edges=${edges}`,
      '--port',
      '0',
    ],
    { TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-page-cn-home-')) },
  );
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /"msg":"ready","url":"([^"]+)"/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.done.then((r) => reject(new Error(`exited: ${r.stderr}`)));
  });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  proc?.child.kill('SIGTERM');
  await proc?.done;
});

const statusOf = async (page: Page) => (await page.locator('#status').textContent()) ?? '';

/** Generates with the form as it is; the first result's bytes. */
async function generate(page: Page): Promise<Buffer> {
  await page.getByRole('button', { name: 'Generate' }).click();
  await expect.poll(() => statusOf(page), { timeout: 90_000 }).toMatch(/^Done in/);
  const [encoded] = await page.$$eval('#results img', async (imgs) =>
    Promise.all(
      imgs.map(async (img) => {
        const bytes = new Uint8Array(
          await (await fetch((img as unknown as { src: string }).src)).arrayBuffer(),
        );
        let text = '';
        for (const b of bytes) text += String.fromCharCode(b);
        return btoa(text);
      }),
    ),
  );
  return Buffer.from(encoded, 'base64');
}

interface AxeResults {
  violations: Array<{ id: string; impact: string | null; nodes: unknown[] }>;
}

describe('the ControlNet panel of the generation page', () => {
  it('offers the loaded ControlNets, sends the picture as a canny unit, and shows the guided image', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${url}/ui`);
    await expect.poll(() => statusOf(page), { timeout: 20_000 }).toBe('Ready.');
    await page.locator('#controlnet-inputs').waitFor({ state: 'visible', timeout: 20_000 });
    const offered = await page
      .getByLabel('ControlNet', { exact: true })
      .locator('option')
      .evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    expect(offered).toEqual(['edges']);

    await page.getByLabel('Prompt', { exact: true }).fill('a red circle on a white background');
    await page.getByLabel('Steps').fill('2');
    await page.getByLabel('Seed', { exact: true }).fill('5');
    const sent: Array<Record<string, unknown>> = [];
    page.on('request', (req) => {
      if (req.method() === 'POST' && new URL(req.url()).pathname === '/text2img/submit')
        sent.push(req.postDataJSON());
    });
    const plain = await generate(page);

    const raw = Buffer.alloc(32 * 32 * 3);
    for (let y = 0; y < 32; y++)
      for (let x = 0; x < 32; x++)
        if ((x - 16) ** 2 + (y - 16) ** 2 < 100) raw.fill(230, 3 * (y * 32 + x), 3 * (y * 32 + x) + 3);
    const picture = await sharp(raw, { raw: { width: 32, height: 32, channels: 3 } })
      .png()
      .toBuffer();
    await page
      .getByLabel('Control image')
      .setInputFiles({ name: 'disc.png', mimeType: 'image/png', buffer: picture });
    await page.getByLabel('Preprocessor').selectOption('canny');
    await page.getByLabel('Control weight').fill('1.5');
    const guided = await generate(page);

    expect(sent[0].controlnet).toBeUndefined();
    expect(sent[1].controlnet).toEqual([
      { model: 'edges', image: picture.toString('base64'), module: 'canny', conditioning_scale: 1.5 },
    ]);
    expect(guided.equals(plain)).toBe(false);
    // The page's answer is the service's: the same body sent directly gives the same bytes.
    const direct = await fetch(`${url}/text2img`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(sent[1]),
    });
    expect(Buffer.from(await direct.arrayBuffer()).equals(guided)).toBe(true);

    const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run: () => Promise<AxeResults> } }).axe;
      const result = await axe.run();
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
    });
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
    await context.close();
  }, 300_000);
});
