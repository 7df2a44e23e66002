import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyPipeline } from '@tiffin/diffusion/testing';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../core/test/server/chromium.js';
import { type CollectedProcess, spawnTiffin } from './cli-process.js';

/**
 * The generation page of `tiffin diffusion start demo` in a real Chromium (Debian's package, driven by
 * playwright-core): a person types a prompt, watches previews, gets the image, reuses its seed, cancels a
 * generation. With an API token set, so the page must ask for it once and send it.
 */
const TOKEN = 'page-test-token';
/** Screenshots of each stage, kept as test artefacts (gitignored). */
const ARTEFACTS = join(import.meta.dirname, '.tmp-generation-page');
mkdirSync(ARTEFACTS, { recursive: true });

let proc: CollectedProcess;
let url: string;
let browser: Browser;

beforeAll(async () => {
  proc = spawnTiffin(['diffusion', 'start', 'demo', '--port', '0'], {
    TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-page-home-')),
    TIFFIN_API_TOKEN: TOKEN,
  });
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

/** Opens the page, answers its token prompt, and waits until it has read the service. */
async function openPage(
  options: { width?: number; height?: number } = {},
): Promise<{ page: Page; foreign: string[] }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1200, height: options.height ?? 900 },
  });
  const page = await context.newPage();
  const foreign: string[] = [];
  page.on('request', (req) => {
    const target = req.url();
    if (!target.startsWith(url) && !target.startsWith('data:') && !target.startsWith('blob:'))
      foreign.push(target);
  });
  const answer = await page.goto(`${url}/ui`);
  expect(answer?.status()).toBe(200);
  expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
  // The service needs a token: the page asks once.
  await page.getByRole('textbox', { name: 'Token' }).fill(TOKEN);
  await page.getByRole('button', { name: 'Use token' }).click();
  await expect.poll(() => statusOf(page), { timeout: 20_000 }).toBe('Ready.');
  return { page, foreign };
}

/** The bytes of the result images the page shows (read back through their blob: URLs). */
async function resultImages(page: Page): Promise<Buffer[]> {
  const encoded = await page.$$eval('#results img', async (imgs) =>
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
  return encoded.map((b) => Buffer.from(b, 'base64'));
}

describe('generation page at /ui in Chromium', () => {
  it('generates with previews, reuses a seed for the same image, cancels a long one, loads nothing from elsewhere', async () => {
    const { page, foreign } = await openPage();
    await page
      .getByLabel('Prompt', { exact: true })
      .fill('a large red circle in the centre on a white background');
    await page.getByLabel('Steps').fill('30');
    await page.getByRole('button', { name: 'Generate' }).click();

    // A live preview arrives from the task's events, then the image with its parameters.
    await page.locator('#preview[src^="data:image/"]').waitFor({ state: 'attached', timeout: 60_000 });
    await expect.poll(() => statusOf(page), { timeout: 60_000 }).toMatch(/^Done in/);
    const [first] = await resultImages(page);
    const meta = await sharp(first).metadata();
    expect([meta.width, meta.height]).toEqual([64, 64]);
    const seed =
      (await page
        .locator('#results dd')
        .nth(await seedIndex(page))
        .textContent()) ?? '';
    expect(seed).toMatch(/^\d+$/);
    await page.screenshot({ path: join(ARTEFACTS, 'result.png'), fullPage: true });

    // Reuse the seed: the same image, byte for byte.
    await page.getByRole('button', { name: 'Reuse last' }).click();
    expect(await page.getByLabel('Seed', { exact: true }).inputValue()).toBe(seed);
    await page.getByRole('button', { name: 'Generate' }).click();
    await expect.poll(() => statusOf(page), { timeout: 60_000 }).toMatch(/^Done in/);
    const [again] = await resultImages(page);
    expect(again.equals(first)).toBe(true);

    // The history keeps both results in this browser.
    await expect.poll(() => page.locator('#history li').count()).toBe(2);

    // A long generation (the most steps the service allows, a larger image) is cancelled while it runs.
    const maxSteps = await page.locator('#steps').getAttribute('max');
    await page.getByLabel('Steps').fill(String(maxSteps));
    // The largest size and image count the demo allows (twice its own 64 px).
    for (const [label, id] of [
      ['Width', 'width'],
      ['Height', 'height'],
      ['Images', 'count'],
    ] as const) {
      const max = await page.locator(`#${id}`).getAttribute('max');
      await page.getByLabel(label, { exact: true }).fill(String(max));
    }
    await page.getByRole('button', { name: 'Generate' }).click();
    await expect.poll(() => statusOf(page), { timeout: 60_000 }).toMatch(/^Step /);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => statusOf(page), { timeout: 30_000 }).toBe('Cancelled.');
    // The cancelled run's last preview is no result: it is gone.
    expect(await page.locator('#preview-figure').isHidden()).toBe(true);
    await expect.poll(() => page.locator('#history li').count()).toBe(2);
    expect(await page.getByRole('button', { name: 'Generate' }).isEnabled()).toBe(true);

    // Inpaint: upload the first result, paint its right half with the brush, repaint it with another prompt
    // (with the first prompt the repainted half could come back nearly as it was).
    await page.getByLabel('Inpaint').check();
    await page
      .getByLabel('Prompt', { exact: true })
      .fill('a small blue square at the bottom left on a black background');
    await page.getByLabel('Image', { exact: true }).setInputFiles({
      name: 'first.jpg',
      mimeType: 'image/jpeg',
      buffer: first,
    });
    await page.getByLabel('Steps').fill('20');
    const canvas = page.locator('#mask-canvas');
    await expect.poll(() => canvas.getAttribute('width')).toBe('64');
    const box = await canvas.boundingBox();
    if (!box) throw new Error('the mask canvas is not shown');
    await page.getByLabel(/^Brush/).fill('24');
    await page.mouse.move(box.x + box.width * 0.75, box.y + box.height * 0.1);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.75, box.y + box.height * 0.9, { steps: 8 });
    await page.mouse.up();
    await page.getByRole('button', { name: 'Generate' }).click();
    await expect.poll(() => statusOf(page), { timeout: 60_000 }).toMatch(/^Done in/);
    const [inpainted] = await resultImages(page);
    const pixels = async (jpeg: Buffer) => new Uint8Array(await sharp(jpeg).raw().toBuffer());
    const [before, after] = [await pixels(first), await pixels(inpainted)];
    // The painted right half changes; the kept left half stays close to the upload (VAE round trip and JPEG).
    const meanDiff = (x0: number, x1: number) => {
      let sum = 0;
      let n = 0;
      for (let y = 0; y < 64; y++)
        for (let x = x0; x < x1; x++)
          for (let c = 0; c < 3; c++) {
            const k = (y * 64 + x) * 3 + c;
            sum += Math.abs(before[k] - after[k]);
            n++;
          }
      return sum / n;
    };
    const kept = meanDiff(0, 24);
    const repainted = meanDiff(40, 64);
    expect(repainted).toBeGreaterThan(3 * kept);
    console.log(
      `inpaint on the demo: mean |Δ| kept part ${kept.toFixed(1)}, repainted part ${repainted.toFixed(1)} levels`,
    );
    await page.screenshot({ path: join(ARTEFACTS, 'inpaint.png'), fullPage: true });

    // From the history, the inpainting comes back with its picture and its painted mask (the right half).
    await page.getByLabel('Text to image').check();
    await page
      .getByRole('button', { name: /^Restore: a small blue square at the bottom left.*inpaint/ })
      .click();
    expect(await page.getByRole('radio', { name: 'Inpaint' }).isChecked()).toBe(true);
    const paintedShare = await canvas.evaluate((c) => {
      const mask = c as unknown as {
        width: number;
        height: number;
        getContext: (kind: '2d') => {
          getImageData: (x: number, y: number, w: number, h: number) => { data: Uint8ClampedArray };
        };
      };
      const { data } = mask.getContext('2d').getImageData(0, 0, mask.width, mask.height);
      let [left, right] = [0, 0];
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] === 0) continue;
        if ((i / 4) % mask.width < mask.width / 2) left++;
        else right++;
      }
      return { left, right };
    });
    expect(paintedShare.right).toBeGreaterThan(0);
    expect(paintedShare.right).toBeGreaterThan(4 * paintedShare.left);

    expect(foreign).toEqual([]);
    await page.context().close();
  }, 300_000);

  it('fits a phone’s width, can be used from the keyboard, and has no serious accessibility violation (axe-core)', async () => {
    const { page } = await openPage({ width: 390 });
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow as number).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(ARTEFACTS, 'phone.png'), fullPage: true });
    // One model served: no checkpoint to choose, so no picker.
    expect(await page.locator('#model-row').isHidden()).toBe(true);

    // Keyboard: from the prompt, Tab reaches the negative prompt next, and Enter on Generate submits.
    await page.getByLabel('Prompt', { exact: true }).focus();
    await page.keyboard.type('a small blue square at the top left on a black background');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.id')).toBe('negative_prompt');
    await page.getByRole('button', { name: 'Generate' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => statusOf(page), { timeout: 60_000 }).toMatch(/^Done in/);

    // axe-core runs in the page (evaluated over the devtools protocol, so the page's CSP stays as it is).
    const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run: () => Promise<AxeResults> } }).axe;
      const result = await axe.run();
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
    });
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious).toEqual([]);
    await page.context().close();
  }, 120_000);
});

/** The viewports a person meets the page on. */
const VIEWPORTS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1280, height: 800 },
] as const;

describe('the page as people use A1111, ComfyUI and Fooocus', () => {
  for (const viewport of VIEWPORTS) {
    it(`on a ${viewport.name} (${viewport.width}×${viewport.height}): Ctrl+Enter generates, the result comes into view as a grid with its parameters once, PNG download`, async () => {
      const { page } = await openPage(viewport);
      // The model's defaults are named: the scheduler's choice says which one the model uses.
      expect(await page.locator('#scheduler option').first().textContent()).toMatch(
        /^\w+ \(the model's default\)$/,
      );
      await page
        .getByLabel('Prompt', { exact: true })
        .fill('a large red circle in the centre on a white background');
      await page.getByLabel('Images').fill('2');
      await page.getByLabel('Prompt', { exact: true }).focus();
      await page.keyboard.press('Control+Enter');
      await expect.poll(() => statusOf(page), { timeout: 60_000 }).toMatch(/^Done in/);
      expect(await inViewport(page, '#results img')).toBe(true);
      expect(await inViewport(page, '#status')).toBe(true);
      // Two images side by side, the parameters listed once for both.
      const boxes = await page
        .locator('#results figure img')
        .evaluateAll((imgs) => imgs.map((img) => Math.round(img.getBoundingClientRect().top)));
      expect(boxes).toHaveLength(2);
      expect(boxes[0]).toBe(boxes[1]);
      expect(await page.locator('#results dt', { hasText: /^prompt$/ }).count()).toBe(1);
      // Download gives the service's PNG.
      const link = page.locator('#results a[download]').first();
      expect(await link.getAttribute('download')).toMatch(/^tiffin-\d+\.png$/);
      const [png] = await resultImages(page);
      expect((await sharp(png).metadata()).format).toBe('png');
      await page.screenshot({ path: join(ARTEFACTS, `${viewport.name}-result.png`) });
      await page.context().close();
    }, 120_000);
  }

  it('a reload while a generation runs picks it up again: progress, then its image (phone)', async () => {
    const { page } = await openPage(VIEWPORTS[0]);
    await page
      .getByLabel('Prompt', { exact: true })
      .fill('a small blue square at the top left on a black background');
    const maxSteps = await page.locator('#steps').getAttribute('max');
    await page.getByLabel('Steps').fill(String(maxSteps));
    await page.getByRole('button', { name: 'Generate' }).click();
    await expect.poll(() => statusOf(page), { timeout: 60_000 }).toMatch(/^Step /);
    await page.reload();
    // The token is kept for the tab; the job is followed again, with its progress and an estimate of what is left.
    await expect
      .poll(() => statusOf(page), { timeout: 60_000 })
      .toMatch(/^Step \d+ of \d+ · about \d+ s left/);
    await page.screenshot({ path: join(ARTEFACTS, 'phone-reload-progress.png') });
    await expect.poll(() => statusOf(page), { timeout: 120_000 }).toMatch(/^Done/);
    const [image] = await resultImages(page);
    const meta = await sharp(image).metadata();
    expect([meta.width, meta.height]).toEqual([64, 64]);
    expect(await inViewport(page, '#results img')).toBe(true);
    await page.screenshot({ path: join(ARTEFACTS, 'phone-reload-result.png') });
    await page.context().close();
  }, 240_000);

  it('a wrong token gets a visible message, the right one then works', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS[1] });
    const page = await context.newPage();
    await page.goto(`${url}/ui`);
    await page.getByRole('textbox', { name: 'Token' }).fill('not-the-token');
    await page.getByRole('button', { name: 'Use token' }).click();
    const message = page.getByRole('alert').filter({ hasText: /refused/ });
    await message.waitFor({ state: 'visible', timeout: 20_000 });
    expect(
      await page.locator('#token-dialog').evaluate((d) => (d as unknown as { open: boolean }).open),
    ).toBe(true);
    await page.screenshot({ path: join(ARTEFACTS, 'wrong-token.png') });
    await page.getByRole('textbox', { name: 'Token' }).fill(TOKEN);
    await page.getByRole('button', { name: 'Use token' }).click();
    await expect.poll(() => statusOf(page), { timeout: 20_000 }).toBe('Ready.');
    await context.close();
  }, 60_000);

  it('checks fields against the service before sending, queues several prompts, and restores a 512 px img2img from its full-size history', async () => {
    const { page } = await openPage(VIEWPORTS[1]);
    const requests: string[] = [];
    page.on('request', (req) => {
      if (req.method() === 'POST') requests.push(new URL(req.url()).pathname);
    });
    // Constraints from /docs.json before any request: a size snaps to a multiple of 8 within bounds, an
    // out-of-range step count is named at the field.
    await page
      .getByLabel('Prompt', { exact: true })
      .fill('a small blue square at the top left on a black background');
    await page.getByLabel('Width', { exact: true }).fill('61');
    await page.getByLabel('Width', { exact: true }).blur();
    expect(await page.getByLabel('Width', { exact: true }).inputValue()).toBe('64');
    await page.getByLabel('Steps').fill('999');
    await page.getByRole('button', { name: 'Generate' }).click();
    expect(
      await page
        .getByRole('alert')
        .filter({ hasText: /^Steps takes values from 1 to \d+\.$/ })
        .count(),
    ).toBe(1);
    expect(await page.locator('#steps').getAttribute('aria-invalid')).toBe('true');
    expect(requests).toEqual([]);

    // Three prompts from one tab: the ones waiting show their places in the service's queue. The first is long
    // (the most steps, the largest size) so the others wait behind it until it is cancelled.
    const submit = async (prompt: string, fields: Record<string, string>) => {
      for (const [id, value] of Object.entries(fields)) await page.locator(`#${id}`).fill(value);
      await page.getByLabel('Prompt', { exact: true }).fill(prompt);
      const before = requests.length;
      await page.getByRole('button', { name: 'Generate' }).click();
      await expect.poll(() => requests.slice(before).some((p) => p.endsWith('/submit'))).toBe(true);
    };
    const most = async (id: string) => (await page.locator(`#${id}`).getAttribute('max')) ?? '';
    await submit('queued prompt 0', {
      steps: await most('steps'),
      width: await most('width'),
      height: await most('height'),
    });
    await submit('queued prompt 1', { steps: '20', width: '64', height: '64' });
    await submit('queued prompt 2', {});
    await expect
      .poll(() => page.locator('#queue li').allInnerTexts(), { timeout: 30_000 })
      .toEqual([
        expect.stringMatching(/^queued prompt 1 — queued \(position \d+/),
        expect.stringMatching(/^queued prompt 2 — queued \(position \d+/),
      ]);
    await page.screenshot({ path: join(ARTEFACTS, 'queue.png') });
    // One waiting prompt is taken out of the queue, the running one cancelled: the one left then runs.
    const historyBefore = await page.locator('#history li').count();
    await page.getByRole('button', { name: 'Remove from the queue: queued prompt 2' }).click();
    await expect.poll(() => page.locator('#queue li').count()).toBe(1);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await expect
      .poll(() => page.locator('#history li').count(), { timeout: 120_000 })
      .toBe(historyBefore + 1);
    expect(await page.locator('#history li').first().textContent()).toMatch(/^queued prompt 1 /);
    expect(await page.locator('#queue-section').isHidden()).toBe(true);

    // A photo-sized (512 px) upload to img2img on the demo: resized in the page to the model's size and served.
    await page.getByLabel('Image to image').check();
    const photo = await sharp({
      create: { width: 512, height: 512, channels: 3, background: { r: 250, g: 250, b: 250 } },
    })
      .composite([
        {
          input: Buffer.from(
            '<svg width="512" height="512"><circle cx="256" cy="256" r="160" fill="red"/></svg>',
          ),
        },
      ])
      .png()
      .toBuffer();
    await page
      .getByLabel('Image', { exact: true })
      .setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: photo });
    await expect.poll(() => page.getByLabel('Width', { exact: true }).inputValue()).toBe('64');
    await page
      .getByLabel('Prompt', { exact: true })
      .fill('a large red circle in the centre on a white background');
    await page.getByLabel('Steps').fill('7');
    // A range input is set as a person drags it: its value, then an input event.
    await page.getByLabel(/^Strength/).evaluate((range) => {
      const slider = range as unknown as { value: string; dispatchEvent: (event: Event) => boolean };
      slider.value = '0.6';
      slider.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await page.getByLabel('Scheduler').selectOption('euler');
    await page.getByLabel('Seed', { exact: true }).fill('42');
    // The demo's own LoRA (it swaps red and blue), at half weight.
    await page.getByLabel('LoRA', { exact: true }).selectOption('swap-red-blue.safetensors');
    await page.getByLabel('LoRA weight').fill('0.5');
    await page.getByRole('button', { name: 'Generate' }).click();
    await expect.poll(() => statusOf(page), { timeout: 60_000 }).toMatch(/^Done in/);
    const [drawn] = await resultImages(page);
    const meta = await sharp(drawn).metadata();
    expect([meta.width, meta.height]).toEqual([64, 64]);

    // Later, in the same browser: every parameter of that generation comes back from the history, with its image.
    await page.reload();
    await expect.poll(() => statusOf(page), { timeout: 20_000 }).toBe('Ready.');
    expect(await page.getByLabel('Text to image').isChecked()).toBe(true);
    await page.getByRole('button', { name: /^Restore: a large red circle.*img2img, seed 42/ }).click();
    expect(await page.getByLabel('Image to image').isChecked()).toBe(true);
    expect(await page.getByLabel('Prompt', { exact: true }).inputValue()).toBe(
      'a large red circle in the centre on a white background',
    );
    expect(await page.getByLabel('Steps').inputValue()).toBe('7');
    expect(await page.getByLabel(/^Strength/).inputValue()).toBe('0.6');
    expect(await page.getByLabel('Scheduler').inputValue()).toBe('euler');
    expect(await page.getByLabel('Seed', { exact: true }).inputValue()).toBe('42');
    expect(await page.getByLabel('LoRA', { exact: true }).inputValue()).toBe('swap-red-blue.safetensors');
    expect(await page.getByLabel('LoRA weight').inputValue()).toBe('0.5');
    expect(
      await page
        .locator('#init-image')
        .evaluate((i) => (i as unknown as { files: { length: number } | null }).files?.length),
    ).toBe(1);
    const [restored] = await resultImages(page);
    expect(restored.equals(drawn)).toBe(true);
    await page.screenshot({ path: join(ARTEFACTS, 'history-restore.png'), fullPage: true });
    await page.context().close();
  }, 300_000);
});

describe('the page of a service with --models-dir: the checkpoint picker', () => {
  let served: CollectedProcess;
  let modelsUrl: string;

  beforeAll(async () => {
    const models = mkdtempSync(join(tmpdir(), 'tiffin-page-models-'));
    writeTinyPipeline(join(models, 'tiny'), { weightSeed: 3 });
    served = spawnTiffin(['diffusion', 'start', 'demo', '--port', '0', '--models-dir', models], {
      TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-page-home-')),
    });
    modelsUrl = await served.url;
  }, 120_000);

  afterAll(async () => {
    served?.child.kill('SIGTERM');
    await served?.done;
  });

  /** Generates with the form as it is; the first result's bytes. */
  async function generate(page: Page): Promise<Buffer> {
    await page.getByRole('button', { name: 'Generate' }).click();
    await expect.poll(() => statusOf(page), { timeout: 90_000 }).toMatch(/^Done in/);
    const [image] = await resultImages(page);
    return image as Buffer;
  }

  it('lists the checkpoints of GET /models, sends the one picked as model, and stays accessible (axe-core)', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${modelsUrl}/ui`);
    await expect.poll(() => statusOf(page), { timeout: 20_000 }).toBe('Ready.');
    const picker = page.getByLabel('Checkpoint');
    expect(await picker.isVisible()).toBe(true);
    const listed = (await (await fetch(`${modelsUrl}/models`)).json()) as {
      default: string;
      models: Array<{ name: string }>;
    };
    const offered = await picker
      .locator('option')
      .evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    expect(offered).toEqual(listed.models.map((m) => m.name));
    expect(await picker.inputValue()).toBe(listed.default);

    await page
      .getByLabel('Prompt', { exact: true })
      .fill('a small blue square at the top left on a black background');
    await page.getByLabel('Steps').fill('2');
    await page.getByLabel('Seed', { exact: true }).fill('11');
    const sent: unknown[] = [];
    page.on('request', (req) => {
      if (req.method() === 'POST' && new URL(req.url()).pathname === '/text2img/submit')
        sent.push(req.postDataJSON());
    });
    const byDefault = await generate(page);
    await picker.selectOption('tiny');
    const fromTiny = await generate(page);
    // The picked checkpoint went as the native model field, and the answer is that checkpoint's.
    expect(sent).toMatchObject([{ seed: 11 }, { seed: 11, model: 'tiny' }]);
    expect((sent[0] as { model?: string }).model).toBeUndefined();
    expect(fromTiny.equals(byDefault)).toBe(false);
    const after = (await (await fetch(`${modelsUrl}/models`)).json()) as {
      models: Array<{ name: string; loaded: boolean }>;
    };
    expect(after.models.find((m) => m.name === 'tiny')?.loaded).toBe(true);
    const direct = await fetch(`${modelsUrl}/text2img`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...(sent[1] as object) }),
    });
    expect(Buffer.from(await direct.arrayBuffer()).equals(fromTiny)).toBe(true);

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

/** Whether the first element matching `selector` starts inside the viewport. */
async function inViewport(page: Page, selector: string): Promise<boolean> {
  return page
    .locator(selector)
    .first()
    .evaluate((e) => {
      const box = e.getBoundingClientRect();
      const { innerHeight } = globalThis as unknown as { innerHeight: number };
      return box.top >= 0 && box.top < innerHeight && box.bottom > 0;
    });
}

interface AxeResults {
  violations: Array<{ id: string; impact: string | null; nodes: unknown[] }>;
}

/** The page's status line. */
async function statusOf(page: Page): Promise<string> {
  return (await page.locator('#status').textContent()) ?? '';
}

/** Where `seed` is among the first result's listed parameters. */
async function seedIndex(page: Page): Promise<number> {
  const keys = await page.locator('#results figure').first().locator('dt').allInnerTexts();
  const k = keys.indexOf('seed');
  if (k < 0) throw new Error(`the result lists no seed: ${keys.join(', ')}`);
  return k;
}
