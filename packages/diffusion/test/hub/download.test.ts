import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  downloadPipeline,
  HubUnreachableError,
  selectPipelineFiles,
  selectTinyAutoencoderFiles,
} from '../../src/hub/index.js';
import { type MockHub, startMockHub } from './mock-hub.js';

const REPO = 'acme/tiny-sd';

function repoFiles(): Record<string, Buffer> {
  const big = Buffer.alloc(300_000);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31) % 251;
  return {
    'model_index.json': Buffer.from('{"_class_name":"StableDiffusionPipeline"}'),
    'scheduler/scheduler_config.json': Buffer.from('{}'),
    'text_encoder/config.json': Buffer.from('{}'),
    'text_encoder/model.safetensors': Buffer.from('te-weights'),
    'text_encoder/pytorch_model.bin': Buffer.from('pickle: never downloaded'),
    'tokenizer/vocab.json': Buffer.from('{}'),
    'tokenizer/merges.txt': Buffer.from('#version: 0.2\n'),
    'unet/config.json': Buffer.from('{}'),
    'unet/diffusion_pytorch_model.safetensors': big,
    'unet/diffusion_pytorch_model.fp16.safetensors': Buffer.from('fp16 variant: skipped'),
    'vae/config.json': Buffer.from('{}'),
    'vae/diffusion_pytorch_model.safetensors': Buffer.from('vae-weights'),
    'safety_checker/model.safetensors': Buffer.from('not needed'),
  };
}

let hub: MockHub | undefined;
let dir: string | undefined;
afterEach(async () => {
  await hub?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  hub = undefined;
  dir = undefined;
});

describe('downloadPipeline (against a loopback hub)', () => {
  it('downloads only the files the pipeline needs, with progress', async () => {
    const files = repoFiles();
    hub = await startMockHub(REPO, files);
    dir = await mkdtemp(join(tmpdir(), 'hub-'));
    const seen: number[] = [];
    const result = await downloadPipeline({
      modelId: REPO,
      destination: dir,
      endpoint: hub.url,
      onProgress: (p) => seen.push(p.bytes),
    });
    const paths = result.files.map((f) => f.path).sort();
    expect(paths).not.toContain('text_encoder/pytorch_model.bin');
    expect(paths).not.toContain('unet/diffusion_pytorch_model.fp16.safetensors');
    expect(paths).not.toContain('safety_checker/model.safetensors');
    expect(paths).toContain('unet/diffusion_pytorch_model.safetensors');
    expect(await readFile(join(dir, 'unet/diffusion_pytorch_model.safetensors'))).toEqual(
      files['unet/diffusion_pytorch_model.safetensors'],
    );
    expect(seen.at(-1)).toBe(result.bytes);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  it("writes a Turbo model's defaults (1 step, no guidance, trailing) beside a repository that has none", async () => {
    hub = await startMockHub('acme/tiny-turbo', repoFiles());
    dir = await mkdtemp(join(tmpdir(), 'hub-'));
    await downloadPipeline({ modelId: 'acme/tiny-turbo', destination: dir, endpoint: hub.url });
    expect(JSON.parse(await readFile(join(dir, 'tiffin_defaults.json'), 'utf8'))).toEqual({
      scheduler_config: { timestep_spacing: 'trailing' },
      num_inference_steps: 1,
      guidance_scale: 0,
    });
    // A repository's own defaults file is fetched and kept.
    await hub.close();
    const own = { ...repoFiles(), 'tiffin_defaults.json': Buffer.from('{"num_inference_steps": 2}') };
    hub = await startMockHub('acme/other-turbo', own);
    const second = await mkdtemp(join(tmpdir(), 'hub-'));
    await downloadPipeline({ modelId: 'acme/other-turbo', destination: second, endpoint: hub.url });
    expect(JSON.parse(await readFile(join(second, 'tiffin_defaults.json'), 'utf8'))).toEqual({
      num_inference_steps: 2,
    });
    await rm(second, { recursive: true, force: true });
  });

  it('resumes an interrupted file with a range request instead of starting over', async () => {
    const files = repoFiles();
    hub = await startMockHub(REPO, files);
    dir = await mkdtemp(join(tmpdir(), 'hub-'));
    hub.interruptNext('unet/diffusion_pytorch_model.safetensors', 100_000);
    await expect(downloadPipeline({ modelId: REPO, destination: dir, endpoint: hub.url })).rejects.toThrow();
    const partial = await stat(join(dir, 'unet/diffusion_pytorch_model.safetensors.part'));
    expect(partial.size).toBeGreaterThan(0);
    expect(partial.size).toBeLessThan(300_000);

    hub.log.length = 0;
    await downloadPipeline({ modelId: REPO, destination: dir, endpoint: hub.url });
    expect(await readFile(join(dir, 'unet/diffusion_pytorch_model.safetensors'))).toEqual(
      files['unet/diffusion_pytorch_model.safetensors'],
    );
    const resumed = hub.log.find(
      (l) =>
        l.startsWith('GET /acme/tiny-sd/resolve/main/unet/diffusion_pytorch_model.safetensors') &&
        !l.endsWith('bytes=0-0'),
    );
    expect(resumed).toMatch(new RegExp(`bytes=${partial.size}-`));
    // Files finished in the first run are not fetched again.
    expect(hub.log.some((l) => l.includes('text_encoder/model.safetensors'))).toBe(false);
  });

  it('sends the token and reads HF_ENDPOINT', async () => {
    hub = await startMockHub(REPO, repoFiles(), 'hf_secret');
    dir = await mkdtemp(join(tmpdir(), 'hub-'));
    const before = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = hub.url;
    try {
      await expect(downloadPipeline({ modelId: REPO, destination: dir })).rejects.toThrow();
      const result = await downloadPipeline({ modelId: REPO, destination: dir, token: 'hf_secret' });
      expect(result.files.length).toBe(10);
    } finally {
      if (before === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = before;
    }
  });

  it('offline: one actionable error', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hub-'));
    const err = await downloadPipeline({
      modelId: REPO,
      destination: dir,
      endpoint: 'http://127.0.0.1:9',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HubUnreachableError);
    expect(String((err as Error).message)).toMatch(/Cannot reach the model hub.*HF_ENDPOINT.*--model-id/);
  });

  it("selects SDXL's second encoder and tokenizer when the repository has them", () => {
    const listed = [
      'model_index.json',
      'text_encoder/config.json',
      'text_encoder/model.safetensors',
      'text_encoder_2/config.json',
      'text_encoder_2/model.fp16.safetensors',
      'text_encoder_2/model.safetensors',
      'tokenizer_2/merges.txt',
      'tokenizer_2/vocab.json',
      'unet/diffusion_pytorch_model.safetensors',
      'vae/diffusion_pytorch_model.safetensors',
      'vae_1_0/diffusion_pytorch_model.safetensors',
    ].map((path) => ({ path, size: 1 }));
    const paths = selectPipelineFiles(listed).map((f) => f.path);
    expect(paths).toContain('text_encoder_2/model.safetensors');
    expect(paths).toContain('tokenizer_2/merges.txt');
    expect(paths).not.toContain('text_encoder_2/model.fp16.safetensors');
    expect(paths).not.toContain('vae_1_0/diffusion_pytorch_model.safetensors');
    expect(() =>
      selectPipelineFiles(
        listed.filter((f) => f.path !== 'text_encoder_2/model.safetensors' && !f.path.includes('fp16')),
      ),
    ).toThrow(/missing text_encoder_2/);
  });

  it("fetches a tiny autoencoder's config and full-precision weights only (--vae-tiny)", async () => {
    hub = await startMockHub('madebyollin/taesd', {
      'config.json': Buffer.from('{"_class_name":"AutoencoderTiny"}'),
      'diffusion_pytorch_model.safetensors': Buffer.from('f32 weights'),
      'diffusion_pytorch_model.fp16.safetensors': Buffer.from('fp16: skipped'),
      'taesd_decoder.pth': Buffer.from('pickle: never downloaded'),
      'images/sample.png': Buffer.from('not needed'),
    });
    dir = await mkdtemp(join(tmpdir(), 'hub-taesd-'));
    const result = await downloadPipeline({
      modelId: 'madebyollin/taesd',
      destination: dir,
      endpoint: hub.url,
      select: selectTinyAutoencoderFiles,
    });
    expect(result.files.map((f) => f.path).sort()).toEqual([
      'config.json',
      'diffusion_pytorch_model.safetensors',
    ]);
    expect((await readdir(dir)).sort()).toEqual(['config.json', 'diffusion_pytorch_model.safetensors']);
    expect(() => selectTinyAutoencoderFiles([{ path: 'config.json', size: 2 }])).toThrow(/AutoencoderTiny/);
    expect(() =>
      selectTinyAutoencoderFiles([
        { path: '../config.json', size: 2 },
        { path: 'sub/diffusion_pytorch_model.safetensors', size: 2 },
      ]),
    ).toThrow(/AutoencoderTiny/);
  });

  it('refuses a repository without safetensors weights', () => {
    expect(() =>
      selectPipelineFiles([
        { path: 'model_index.json', size: 1 },
        { path: 'unet/diffusion_pytorch_model.bin', size: 1 },
      ]),
    ).toThrow(/missing text_encoder, unet, vae/);
  });
});

describe('hub file names that leave the destination', () => {
  it('never writes a listed file outside the destination, whatever its name', async () => {
    const files = repoFiles();
    // The hub (or a mirror) lists weights whose names climb out of the store, and no other UNet weights.
    delete files['unet/diffusion_pytorch_model.safetensors'];
    delete files['unet/diffusion_pytorch_model.fp16.safetensors'];
    // outside-reads: ignore (the hostile name a hub lists, which the download must refuse)
    files['unet/../../../../pwned/evil.safetensors'] = Buffer.from('evil');
    files['unet/..\\..\\pwned\\evil2.safetensors'] = Buffer.from('evil');
    hub = await startMockHub(REPO, files);
    dir = await mkdtemp(join(tmpdir(), 'hub-'));
    const destination = join(dir, 'a', 'b', 'c', 'store');
    // On main the first name was chosen as the UNet weights and written to <dir>/pwned/evil.safetensors.
    await expect(downloadPipeline({ modelId: REPO, destination, endpoint: hub.url })).rejects.toThrow(
      /missing unet/,
    );
    await expect(stat(join(dir, 'pwned'))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(dir, 'a', 'pwned'))).rejects.toThrow(/ENOENT/);
    expect(hub.log.some((l) => l.includes('evil'))).toBe(false);
  });

  it('refuses to write through a symlink in the destination that points out of it', async () => {
    hub = await startMockHub(REPO, repoFiles());
    dir = await mkdtemp(join(tmpdir(), 'hub-'));
    const destination = join(dir, 'store');
    const outside = join(dir, 'outside');
    await mkdir(destination, { recursive: true });
    await mkdir(outside);
    await symlink(outside, join(destination, 'unet'));
    await expect(downloadPipeline({ modelId: REPO, destination, endpoint: hub.url })).rejects.toThrow(
      /symbolic link; refused/,
    );
    expect(await readdir(outside)).toEqual([]);
  });
});
