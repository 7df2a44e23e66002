import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyPipeline } from '@tiffin/diffusion/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CollectedProcess, spawnTiffin } from './cli-process.js';

/**
 * `tiffin diffusion start demo --models-dir DIR --max-loaded-models N`, as a user starts it: the folder's
 * checkpoints are listed beside the start model by the native, OpenAI and A1111 listings; a `--models-dir` that is
 * no folder stops the command.
 */
const home = () => mkdtempSync(join(tmpdir(), 'tiffin-cli-home-'));
const models = mkdtempSync(join(tmpdir(), 'tiffin-cli-models-'));
writeTinyPipeline(join(models, 'tiny'));
let proc: CollectedProcess;
let url = '';

beforeAll(async () => {
  proc = spawnTiffin(
    ['diffusion', 'start', 'demo', '--port', '0', '--models-dir', models, '--max-loaded-models', '2'],
    { TIFFIN_TF_BACKEND: 'onnxruntime', TIFFIN_HOME: home() },
  );
  url = await proc.url;
}, 120_000);

afterAll(async () => {
  proc?.child.kill('SIGTERM');
  await proc?.done;
});

const get = async (path: string) => (await fetch(`${url}${path}`)).json() as Promise<Record<string, unknown>>;

describe('tiffin diffusion start --models-dir', () => {
  it("lists the folder's checkpoints beside the start model", async () => {
    const listed = await get('/models');
    expect(listed.max_loaded).toBe(2);
    const names = (listed.models as Array<{ name: string }>).map((m) => m.name);
    expect(names.slice(1)).toEqual(['tiny']);
    expect(names[0]).toBe(listed.default);
    const v1 = (await get('/v1/models')).data as Array<{ id: string }>;
    expect(v1.map((m) => m.id)).toContain('tiny');
  });

  it('refuses a --models-dir that is no folder', async () => {
    const file = join(models, 'file.txt');
    writeFileSync(file, 'x');
    const bad = spawnTiffin(['diffusion', 'start', 'demo', '--port', '0', '--models-dir', file], {
      TIFFIN_HOME: home(),
    });
    const exited = await bad.done;
    expect(exited.code).not.toBe(0);
    expect(exited.stderr).toMatch(/--models-dir .* is not a folder/);
  });
});
