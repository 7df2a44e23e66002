import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { caption, readScene, type SceneSpec } from '@tiffin/demo-model';
import { writeTinyPipeline } from '@tiffin/diffusion/testing';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnTiffin } from './cli-process.js';

/** `tiffin diffusion ...` run from sources on the wasm backend, with its own TIFFIN_HOME and hub endpoint. */
const tiffin = (args: string[], env: Record<string, string>) =>
  spawnTiffin(args, { TIFFIN_TF_BACKEND: 'wasm', ...env });

const run = (args: string[], env: Record<string, string>) => tiffin(args, env).done;

/** Every file of a folder as relative path → bytes. */
function folderFiles(dir: string, base = dir, out: Record<string, Buffer> = {}): Record<string, Buffer> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) folderFiles(path, base, out);
    else out[relative(base, path)] = readFileSync(path);
  }
  return out;
}

/** The diffusion package's loopback hub (outside this package's tsc root, so imported by URL). */
interface MockHub {
  url: string;
  log: string[];
  interruptNext(path: string, bytes: number): void;
  close(): Promise<void>;
}
const { startMockHub } = (await import(
  new URL('../../diffusion/test/hub/mock-hub.ts', import.meta.url).href
)) as {
  startMockHub: (repo: string, files: Record<string, Buffer>) => Promise<MockHub>;
};

const tiny = writeTinyPipeline(mkdtempSync(join(tmpdir(), 'tiffin-cli-tiny-')));
const tinyXl = writeTinyPipeline(mkdtempSync(join(tmpdir(), 'tiffin-cli-tiny-xl-')), { flavour: 'sdxl' });
let hub: MockHub | undefined;
afterAll(async () => {
  await hub?.close();
});

describe('tiffin diffusion download', () => {
  it('downloads into the model store, resuming after an interrupted transfer, and models list shows it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tiffin-cli-home-'));
    hub = await startMockHub('acme/tiny-sd', folderFiles(tiny));
    const env = { TIFFIN_HOME: home, HF_ENDPOINT: hub.url };
    hub.interruptNext('unet/diffusion_pytorch_model.safetensors', 100_000);
    const first = await run(['diffusion', 'download', 'stable-diffusion', '--model-id', 'acme/tiny-sd'], env);
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/tiffin: error: .*(resume|terminated|aborted|closed|socket)/i);

    const second = await run(
      ['diffusion', 'download', 'stable-diffusion', '--model-id', 'acme/tiny-sd'],
      env,
    );
    expect(second.stderr).not.toMatch(/error/);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Downloaded acme--tiny-sd:main');
    // The interrupted file continued from where it stopped.
    expect(hub.log.some((l) => /unet\/diffusion_pytorch_model\.safetensors bytes=\d+-/.test(l))).toBe(true);

    const list = await run(['models', 'list', '-o', 'json'], env);
    const models = JSON.parse(list.stdout) as Array<{
      tag: string;
      module: string;
      labels: Record<string, string>;
    }>;
    expect(models.map((m) => [m.tag, m.module])).toEqual([['acme--tiny-sd:main', 'tiffin.diffusion']]);
    expect(models[0].labels).toMatchObject({ model_id: 'acme/tiny-sd', revision: 'main' });
    const stored = join(
      home,
      'models',
      'acme--tiny-sd',
      'main',
      'files',
      'unet',
      'diffusion_pytorch_model.safetensors',
    );
    expect(
      readFileSync(stored).equals(readFileSync(join(tiny, 'unet', 'diffusion_pytorch_model.safetensors'))),
    ).toBe(true);

    const again = await run(['diffusion', 'download', 'stable-diffusion', '--model-id', 'acme/tiny-sd'], env);
    expect(again.stdout).toContain('Already in the store: acme--tiny-sd:main');
  }, 60_000);

  it('says in one line what to do when the hub cannot be reached', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tiffin-cli-home-'));
    const res = await run(['diffusion', 'download', 'stable-diffusion', '--model-id', 'acme/absent'], {
      TIFFIN_HOME: home,
      HF_ENDPOINT: 'http://127.0.0.1:9',
    });
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/Cannot reach the model hub .*HF_ENDPOINT.*--model-id <folder>/);
  });

  it('stable-diffusion-xl refuses a folder that is not SDXL, in one line', async () => {
    const res = await run(['diffusion', 'start', 'stable-diffusion-xl', '--model-id', tiny], {});
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/is not an SDXL pipeline .*serve it with stable-diffusion/);
  });
});

describe('tiffin diffusion start', () => {
  it('serves POST /text2img for a local folder, behind --api-token', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tiffin-cli-home-'));
    const proc = tiffin(
      ['diffusion', 'start', 'stable-diffusion', '--model-id', tiny, '--port', '0', '--api-token', 'sesame'],
      { TIFFIN_HOME: home },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        proc.child.stdout?.on('data', (c: Buffer) => {
          out += c.toString();
          const m = /"msg":"ready","url":"([^"]+)"/.exec(out);
          if (m) resolve(m[1]);
        });
        proc.done.then((r) => reject(new Error(`exited: ${r.stderr}`)));
      });
      const body = JSON.stringify({ prompt: 'x', height: 16, width: 16, num_inference_steps: 1, seed: 2 });
      const refused = await fetch(`${url}/text2img`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(refused.status).toBe(401);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      const res = await fetch(`${url}/text2img`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sesame' },
        body,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/jpeg');
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
    } finally {
      proc.child.kill('SIGTERM');
      await proc.done;
    }
  }, 60_000);

  it('serves the bundled demo model for `demo`: /text2img draws the background the prompt asks for', async () => {
    const proc = tiffin(['diffusion', 'start', 'demo', '--port', '0'], {
      TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-cli-home-')),
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        proc.child.stdout?.on('data', (c: Buffer) => {
          out += c.toString();
          const m = /"msg":"ready","url":"([^"]+)"/.exec(out);
          if (m) resolve(m[1]);
        });
        proc.done.then((r) => reject(new Error(`exited: ${r.stderr}`)));
      });
      const scenes: SceneSpec[] = [
        { shape: 'circle', colour: 'red', size: 'large', position: 'centre', background: 'black' },
        { shape: 'square', colour: 'blue', size: 'medium', position: 'top left', background: 'white' },
      ];
      for (const [i, scene] of scenes.entries()) {
        const res = await fetch(`${url}/text2img`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            prompt: caption(scene),
            num_inference_steps: 20,
            guidance_scale: 4,
            seed: i,
          }),
        });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('image/jpeg');
        const { data, info } = await sharp(Buffer.from(await res.arrayBuffer()))
          .raw()
          .toBuffer({ resolveWithObject: true });
        expect([info.width, info.height, info.channels]).toEqual([64, 64, 3]);
        expect(readScene({ width: 64, height: 64, data: new Uint8Array(data) }).background).toBe(
          scene.background,
        );
      }
    } finally {
      proc.child.kill('SIGTERM');
      await proc.done;
    }
  }, 120_000);

  it('--backend webgpu without its optional packages fails in one line naming them, before touching the model', async () => {
    // An unreachable hub and a model id not in the store: reaching the model would give a hub error instead.
    const res = await run(
      ['diffusion', 'start', 'stable-diffusion', '--model-id', 'acme/absent', '--backend', 'webgpu'],
      { TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-cli-home-')), HF_ENDPOINT: 'http://127.0.0.1:9' },
    );
    expect(res.code).not.toBe(0);
    const lines = res.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^tiffin: error: the webgpu backend \(TensorFlow.js engine\) needs packages that are not installed /,
    );
    expect(lines[0]).toContain('`npm install webgpu@0.6.2 @tensorflow/tfjs-backend-webgpu@4.22.0`');
    expect(lines[0]).toContain('webgpu@0.6.2');
    expect(lines[0]).toContain('@tensorflow/tfjs-backend-webgpu@4.22.0');
    expect(lines[0]).not.toMatch(/hub/i);
  });

  it('--ort-threads, --ort-providers and --weights: bad values fail in one line saying what is expected', async () => {
    // The value checks themselves are unit-tested in @tiffin/diffusion (session.test.ts); here: the CLI wiring.
    const cases: [string[], RegExp][] = [
      [['--ort-threads', '0'], /'--ort-threads <n>' argument '0' is invalid\. expected a positive integer/],
      [
        ['--ort-providers', 'cdua'],
        /unknown execution provider "cdua" \(onnxruntime-node providers: cpu, cuda, /,
      ],
      [
        ['--ort-threads', '2', '--backend', 'wasm'],
        /--ort-threads applies to --backend onnxruntime, not wasm/,
      ],
      [
        ['--weights', 'int4'],
        /'--weights <format>' argument 'int4' is invalid\. unknown weight format "int4": expected f32, f16, int8/,
      ],
      [['--weights', 'int8', '--backend', 'cpu'], /--weights applies to --backend onnxruntime, not cpu/],
    ];
    for (const [flags, message] of cases) {
      const res = await run(
        ['diffusion', 'start', 'stable-diffusion', '--model-id', 'acme/absent', ...flags],
        {
          TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-cli-home-')),
          HF_ENDPOINT: 'http://127.0.0.1:9',
        },
      );
      expect(res.code, flags.join(' ')).not.toBe(0);
      const lines = res.stderr.trim().split('\n');
      expect(lines, flags.join(' ')).toHaveLength(1);
      expect(lines[0]).toMatch(message);
    }
    const help = await run(['diffusion', 'start', '--help'], {});
    expect(help.stdout).toMatch(/--ort-threads <n>/);
    expect(help.stdout).toMatch(/--ort-providers <list>/);
    expect(help.stdout).toMatch(/--weights <format>/);
  }, 240_000);

  it('stable-diffusion-xl --ort-providers cuda,cpu without the CUDA provider serves SDXL on CPU (int8 weights) and logs the skip', async () => {
    const proc = tiffin(
      [
        'diffusion',
        'start',
        'stable-diffusion-xl',
        '--model-id',
        tinyXl,
        '--port',
        '0',
        '--backend',
        'onnxruntime',
        '--ort-threads',
        '1',
        '--ort-providers',
        'cuda,cpu',
        '--weights',
        'int8',
      ],
      { TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-cli-home-')) },
    );
    // The service's own log lines (engine start-up, "diffusion model ready") go to stderr.
    let log = '';
    proc.child.stderr?.on('data', (c: Buffer) => {
      log += c.toString();
    });
    try {
      await new Promise<void>((resolve, reject) => {
        proc.child.stderr?.on('data', () => {
          if (log.includes('"msg":"diffusion model ready"')) resolve();
        });
        proc.done.then((r) => reject(new Error(`exited: ${r.stderr}`)));
      });
      const url = await proc.url;
      expect(log).toMatch(/onnxruntime skipped execution provider cuda: /);
      // The CPU provider runs f32 graphs, so the int8 weights apply (the VAE keeps f32).
      expect(log).toMatch(/onnxruntime unet f32, int8 weights graph built/);
      // SDXL's two encoders, each its own graph.
      expect(log).toMatch(/onnxruntime sdxl_text_encoder f32, int8 weights graph built/);
      expect(log).toMatch(/onnxruntime sdxl_text_encoder_2 f32, int8 weights graph built/);
      expect(log).toMatch(/"backend":"onnxruntime"/);
      // No size: the model's own (unet sample_size × VAE factor: 32 for the tiny SDXL, 1024 for SDXL base).
      const res = await fetch(`${url}/text2img`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'x', num_inference_steps: 1, seed: 2 }),
      });
      expect(res.status).toBe(200);
      const jpeg = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      expect([jpeg.width, jpeg.height]).toEqual([32, 32]);
    } finally {
      proc.child.kill('SIGTERM');
      await proc.done;
    }
  }, 300_000);

  it('lists onnxruntime and webgpu among the --backend choices', async () => {
    const res = await run(['diffusion', 'start', 'stable-diffusion', '--backend', 'metal'], {});
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(
      /Allowed choices are tensorflow-gpu, onnxruntime, tensorflow, wasm, cpu, webgpu/,
    );
  });
});

describe('tiffin diffusion build', () => {
  it('packages the model, the LoRA files and the service, and prints the tag and next steps', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tiffin-cli-home-'));
    const loras = mkdtempSync(join(tmpdir(), 'tiffin-cli-loras-'));
    writeFileSync(join(loras, 'style.safetensors'), 'lora bytes');
    const res = await run(
      [
        'diffusion',
        'build',
        'stable-diffusion',
        '--model-id',
        tiny,
        '--lora-dir',
        loras,
        '--name',
        'tiny-sd',
        '--version',
        '1',
        '--no-lockfile',
      ],
      { TIFFIN_HOME: home },
    );
    expect(res.stderr).not.toMatch(/error/);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Successfully built package tiny-sd:1');
    expect(res.stdout).toContain('tiffin serve tiny-sd:1');
    const pkg = join(home, 'packages', 'tiny-sd', '1');
    const manifest = readFileSync(join(pkg, 'manifest.yaml'), 'utf8');
    expect(manifest).toMatch(/tiny-sd-model:/);
    expect(manifest).toMatch(/tiny-sd-lora:/);
    expect(readdirSync(join(pkg, 'models')).sort()).toEqual(['tiny-sd-lora', 'tiny-sd-model']);
    expect(readFileSync(join(pkg, 'service.js'), 'utf8')).toContain('createDiffusionService');
  }, 120_000);
});
