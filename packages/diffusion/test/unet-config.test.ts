import { describe, expect, it } from 'vitest';
import { unetWeightSpecs } from '../src/architectures/unet.js';
import { type UNetConfig, validateUNetConfig } from '../src/architectures/unet-config.js';
import { sdReferenceConfigs } from '../src/families/pipelines.js';
import { UNET_FAMILIES, type UNetFamilyName } from '../src/families/unet-families.js';
import { tinyConfigs } from '../src/tiny/tiny-configs.js';
import { tinyFamilyUNet } from '../src/tiny/tiny-families.js';

const base = tinyConfigs('sd1').unet as unknown as UNetConfig;
/** A family's UNet at full size: its row over SD 1.5's reference config. */
const full = (name: UNetFamilyName): UNetConfig =>
  ({ ...sdReferenceConfigs('sd1').unet, ...UNET_FAMILIES[name].unet }) as unknown as UNetConfig;
const params = (c: UNetConfig) =>
  unetWeightSpecs(c).reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0);
const names = (c: UNetConfig) => unetWeightSpecs(c).map((s) => s.name);

describe('UNet configs of distilled families (docs/spec/diffusion.md §5.1)', () => {
  it('declare the published sizes: BK-SDM small 482.3M and tiny 323.4M, Vega 745M, SSD-1B 1.3B, the refiner 2.26B parameters', () => {
    expect(params(full('bk-sdm-small')) / 1e6).toBeCloseTo(482.3, 1);
    expect(params(full('bk-sdm-tiny')) / 1e6).toBeCloseTo(323.4, 1);
    expect(Math.round(params(full('segmind-vega')) / 1e6)).toBe(745);
    expect(Math.round(params(full('ssd-1b')) / 1e8) / 10).toBe(1.3);
    // The SDXL refiner's UNet: 2.26B, its fp16 file's 4.52 GB.
    expect(Math.round(params(full('sdxl-refiner')) / 1e7) / 100).toBe(2.26);
  });

  it('accept every family at full and tiny size', () => {
    for (const name of Object.keys(UNET_FAMILIES) as UNetFamilyName[]) {
      expect(() => validateUNetConfig(full(name), { textTime: true })).not.toThrow();
      const tiny = { ...base, ...tinyFamilyUNet(name, 32) } as UNetConfig;
      expect(() => validateUNetConfig(tiny, { textTime: true })).not.toThrow();
    }
  });

  it('mid_block_type null has no mid block, UNetMidBlock2D one resnet, a missing key the default', () => {
    const mid = (c: Partial<UNetConfig>) =>
      names({ ...base, ...c } as UNetConfig)
        .filter((n) => n.startsWith('mid_block.'))
        .map((n) => n.split('.').slice(1, 3).join('.'));
    expect(mid({ mid_block_type: null })).toEqual([]);
    expect(new Set(mid({ mid_block_type: 'UNetMidBlock2D' }))).toEqual(new Set(['resnets.0']));
    const { mid_block_type: _, ...noKey } = base;
    expect(new Set(mid(noKey))).toEqual(new Set(['resnets.0', 'attentions.0', 'resnets.1']));
  });

  it('layers_per_block per block: down blocks get that many resnets, up blocks one more (reversed)', () => {
    const c = { ...base, layers_per_block: [1, 3] } as UNetConfig;
    const resnets = (block: string) =>
      new Set(
        names(c)
          .filter((n) => n.startsWith(`${block}.resnets.`))
          .map((n) => n.split('.')[3]),
      ).size;
    expect([resnets('down_blocks.0'), resnets('down_blocks.1')]).toEqual([1, 3]);
    expect([resnets('up_blocks.0'), resnets('up_blocks.1')]).toEqual([4, 2]);
  });

  it('names what it cannot build in one line', () => {
    const refused: [Partial<UNetConfig>, RegExp][] = [
      [{ mid_block_type: 'UNetMidBlock2DSimpleCrossAttn' }, /mid block type UNetMidBlock2DSimpleCrossAttn/],
      [{ down_block_types: ['AttnDownBlock2D', 'CrossAttnDownBlock2D'] }, /down block type AttnDownBlock2D/],
      [{ transformer_layers_per_block: [1, [1, 2]] }, /needs reverse_transformer_layers_per_block/],
      [
        { transformer_layers_per_block: [1, [1]], reverse_transformer_layers_per_block: [1, 1] },
        /transformer_layers_per_block\[1\] needs a depth for each of its 2 layers/,
      ],
      [
        { reverse_transformer_layers_per_block: [[1, 1], 1] },
        /reverse_transformer_layers_per_block\[0\] needs/,
      ],
      [{ cross_attention_dim: [32, 64] }, /cross_attention_dim differs between blocks/],
      [{ layers_per_block: [2] }, /layers_per_block = \[2\] needs one valid value or 2/],
      [{ layers_per_block: 1e9 }, /layers_per_block/],
      [{ only_cross_attention: [true] }, /only_cross_attention/],
      [
        { resnet_time_scale_shift: 'scale_shift' },
        /resnet_time_scale_shift = "scale_shift" is not supported/,
      ],
      [{ act_fn: 'gelu' }, /act_fn = "gelu" is not supported/],
      [{ attention_head_dim: 3 }, /attention heads 3 do not divide block 0's 32 channels/],
      // diffusers' other added embeddings: named with what they need (image embeddings Tiffin has no encoder for).
      [{ addition_embed_type: 'text' }, /addition_embed_type text is not supported \(DeepFloyd IF's/],
      [
        { addition_embed_type: 'text_image' },
        /text_image is not supported \(Kandinsky 2\.1's: .*image_embeds/,
      ],
      [{ addition_embed_type: 'image' }, /addition_embed_type image is not supported \(Kandinsky 2\.2's/],
      [{ addition_embed_type: 'image_hint' }, /image_hint is not supported \(Kandinsky 2\.2 ControlNet's/],
    ];
    for (const [patch, message] of refused) {
      let error: unknown;
      try {
        validateUNetConfig({ ...base, ...patch } as UNetConfig);
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(patch)).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
    }
  });
});
