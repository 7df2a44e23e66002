import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { type CollectedProcess, spawnDemo } from './cli-process.js';

/**
 * `tiffin diffusion start demo` keeps image jobs where `tiffin serve` keeps tasks (disk by default,
 * docs/tasks.md "Where tasks live"): a job running when the process is killed runs again after the restart,
 * its answer is fetched from the second process, and its webhook is delivered from there, signed.
 */
const home = mkdtempSync(join(tmpdir(), 'tiffin-diffusion-kill-'));
const running: CollectedProcess[] = [];
const hooks: Array<{ headers: Record<string, string>; body: string }> = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    hooks.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
    res.writeHead(200).end();
  });
});
afterAll(async () => {
  for (const p of running) {
    p.child.kill('SIGKILL');
    await p.done;
  }
  receiver.close();
  rmSync(home, { recursive: true, force: true });
});

const secret = `whsec_${randomBytes(24).toString('base64')}`;

function start(hookHost: string): CollectedProcess {
  const p = spawnDemo(
    ['--tasks-dir', join(home, 'jobs'), '--webhook-allow', hookHost, '--webhook-secret', secret],
    home,
  );
  running.push(p);
  return p;
}

interface JobView {
  status: string;
  step: number | null;
}
const status = async (url: string, id: string) =>
  (await (await fetch(`${url}/text2img/status?id=${id}`)).json()) as JobView;

describe('tiffin diffusion start --tasks (disk, the default) under kill -9', () => {
  it('runs a job killed mid-generation again after the restart; its image and signed webhook come from the new process', async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookHost = `127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const first = start(hookHost);
    const url1 = await first.url;
    const submitted = await fetch(`${url1}/text2img/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'tiffin-webhook-url': `http://${hookHost}/done` },
      body: JSON.stringify({
        prompt: 'a large red circle in the centre on a white background',
        num_inference_steps: 150,
        seed: 3,
      }),
    });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    let atKill: JobView;
    for (;;) {
      atKill = await status(url1, id);
      // Mid-generation: some of its steps done.
      if (atKill.status !== 'queued' && !(atKill.status === 'running' && !atKill.step)) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    first.child.kill('SIGKILL');
    await first.done;
    // Killed while it ran: not finished, no webhook yet.
    expect(atKill.status).toBe('running');
    expect(atKill.step).toBeGreaterThan(0);
    expect(hooks).toHaveLength(0);

    const second = start(hookHost);
    const url2 = await second.url;
    let final: JobView;
    for (;;) {
      final = await status(url2, id);
      if (final.status !== 'queued' && final.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    console.info(
      `[diffusion kill -9] at the kill: ${JSON.stringify(atKill)}; after the restart: ${final.status}`,
    );
    expect(final.status).toBe('succeeded');
    const image = await fetch(`${url2}/text2img/get?id=${id}`);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/jpeg');
    const meta = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([64, 64]);

    for (let i = 0; hooks.length === 0 && i < 100; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(hooks).toHaveLength(1);
    const hook = hooks[0]!;
    const event = new Webhook(secret).verify(hook.body, hook.headers) as {
      data: { id: string; status: string };
    };
    expect(event.data).toMatchObject({ id, status: 'succeeded' });
  }, 180_000);
});
