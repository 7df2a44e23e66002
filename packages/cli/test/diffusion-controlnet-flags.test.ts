import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectControlNet, resolveControlNets } from '../src/diffusion/controlnet-flags.js';
import { spawnTiffin } from './cli-process.js';

/**
 * `tiffin diffusion start … --controlnet <name>=<folder | .safetensors | hub id>` (repeatable): each value
 * checked as it is read, local ControlNets taken as they are, and a malformed one stopping the command in one line.
 */
describe('--controlnet', () => {
  it('collects name=source pairs in order, refusing a malformed value, a bad name and a name given twice', () => {
    const pairs = collectControlNet('depth=./d', collectControlNet('canny=lllyasviel/sd-controlnet-canny'));
    expect(pairs).toEqual([
      ['canny', 'lllyasviel/sd-controlnet-canny'],
      ['depth', './d'],
    ]);
    // A source may hold '=' (a folder name): the first one splits.
    expect(collectControlNet('a=./x=y')).toEqual([['a', './x=y']]);
    expect(() => collectControlNet('canny')).toThrow(/name=<folder\|file\|hub id>/);
    expect(() => collectControlNet('=./x')).toThrow(/name=/);
    expect(() => collectControlNet('canny=')).toThrow(/name=/);
    expect(() => collectControlNet('../x=./y')).toThrow(/letters, digits/);
    expect(() => collectControlNet('canny=./b', [['canny', './a']])).toThrow(/given twice/);
  });

  it('takes a local folder with config.json and a .safetensors file as they are; refuses other local paths', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tiffin-cli-controlnet-'));
    const folder = join(root, 'canny');
    mkdirSync(folder);
    writeFileSync(join(folder, 'config.json'), '{}');
    const file = join(root, 'depth.safetensors');
    writeFileSync(file, '');
    const { controlnets, tags } = await resolveControlNets([
      ['canny', folder],
      ['depth', file],
    ]);
    expect(controlnets).toEqual({ canny: folder, depth: file });
    expect(tags).toEqual([]);
    const empty = join(root, 'empty');
    mkdirSync(empty);
    await expect(resolveControlNets([['x', empty]])).rejects.toThrow(/is not a ControlNet/);
    await expect(resolveControlNets([['x', 'not a hub id']])).rejects.toThrow(
      /neither an existing folder nor a hub id/,
    );
  });

  it('stops tiffin diffusion start with the reason on a malformed flag', async () => {
    const proc = spawnTiffin(
      ['diffusion', 'start', 'demo', '--port', '0', '--controlnet', 'no-equals-sign'],
      {
        TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-cli-home-')),
      },
    );
    const exited = await proc.done;
    expect(exited.code).not.toBe(0);
    expect(exited.stderr).toMatch(/--controlnet takes name=/);
  }, 60_000);
});
