import { describe, expect, it } from 'vitest';
import { type ClipTextConfig, clipTextWeightSpecs } from '../src/architectures/clip-text.js';
import { unetWeightSpecs } from '../src/architectures/unet.js';
import type { UNetConfig } from '../src/architectures/unet-config.js';
import { type VaeConfig, vaeWeightSpecs } from '../src/architectures/vae.js';
import { sdReferenceConfigs, sdxlReferenceConfigs } from '../src/families/pipelines.js';
import { sdxlTinyFolderConfigs } from '../src/tiny/sdxl-tiny-configs.js';
import { tinyConfigs } from '../src/tiny/tiny-configs.js';

const count = (specs: readonly { shape: readonly number[] }[]) =>
  specs.reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0);
const millions = (n: number) => Math.round(n / 1e4) / 100;

describe("the real families' reference configs (src/families/pipelines.ts)", () => {
  it('declare the published networks: SD 1.5, SD 2 and SDXL base UNets, SD 1.5 text encoder, the VAE', () => {
    const unet = (c: unknown) => millions(count(unetWeightSpecs(c as UNetConfig)));
    expect(unet(sdReferenceConfigs('sd1').unet)).toBe(859.52);
    expect(unet(sdReferenceConfigs('sd2').unet)).toBe(865.91);
    expect(unet(sdxlReferenceConfigs().unet)).toBe(2567.46);
    expect(
      millions(count(clipTextWeightSpecs(sdReferenceConfigs('sd1').textEncoder as ClipTextConfig))),
    ).toBe(123.06);
    expect(millions(count(vaeWeightSpecs(sdReferenceConfigs('sd1').vae as VaeConfig)))).toBe(83.65);
  });

  it('the tiny folders are those configs at tiny sizes: the same fields in the same order, the rest as the row', () => {
    for (const flavour of ['sd1', 'sd2'] as const) {
      const ref = sdReferenceConfigs(flavour);
      const tiny = tinyConfigs(flavour);
      for (const part of ['textEncoder', 'unet', 'vae'] as const) {
        expect(Object.keys(tiny[part]), `${flavour} ${part}`).toEqual(Object.keys(ref[part]));
        expect(tiny[part], `${flavour} ${part}`).not.toEqual(ref[part]);
      }
      const { textEncoder: _t, unet: _u, vae: _v, ...folder } = tiny;
      const { textEncoder: _rt, unet: _ru, vae: _rv, ...refFolder } = ref;
      expect(folder).toEqual(refFolder);
      expect(tiny.unet.use_linear_projection).toBe(ref.unet.use_linear_projection);
    }
    const xl = sdxlTinyFolderConfigs();
    const xlRef = sdxlReferenceConfigs();
    expect([xl.modelIndex, xl.scheduler]).toEqual([xlRef.modelIndex, xlRef.scheduler]);
    expect(Object.keys(xl.unet)).toEqual(expect.arrayContaining(Object.keys(xlRef.unet)));
  });

  it('hands out fresh objects: a caller changing its copy changes no other', () => {
    const a = sdReferenceConfigs('sd1');
    a.unet.block_out_channels.push(1);
    expect(sdReferenceConfigs('sd1').unet.block_out_channels).toEqual([320, 640, 1280, 1280]);
  });
});
