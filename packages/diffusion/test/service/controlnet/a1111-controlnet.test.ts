import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { a1111ControlNet } from '../../../src/service/compat/a1111/a1111-controlnet.js';

const loaded = ['control_v11p_sd15_canny', 'depth'];
const scripts = (...args: unknown[]) => ({ alwayson_scripts: { controlnet: { args } } });

describe("A1111's alwayson_scripts.controlnet as native units", () => {
  it("maps the extension's fields, its defaults where left out, and drops the model list's hash", () => {
    const units = a1111ControlNet(
      scripts(
        {
          enabled: true,
          module: 'canny',
          model: 'control_v11p_sd15_canny [d14c016b]',
          weight: 0.7,
          image: 'AAAA',
          guidance_start: 0.1,
          guidance_end: 0.9,
          threshold_a: 50,
          threshold_b: 150,
          control_mode: 'ControlNet is more important',
          pixel_perfect: true,
          processor_res: 512,
          resize_mode: 'Crop and Resize',
        },
        { model: 'depth', input_image: 'BBBB', threshold_a: -1, threshold_b: -1 },
        { model: 'depth', image: { image: 'CCCC', mask: null }, control_mode: 0 },
      ),
      loaded,
      undefined,
    );
    expect(units).toEqual([
      {
        model: 'control_v11p_sd15_canny',
        image: 'AAAA',
        module: 'canny',
        conditioning_scale: 0.7,
        guidance_start: 0.1,
        guidance_end: 0.9,
        guess_mode: false,
        control_mode: 'controlnet',
        // Pixel perfect: the map is made at the generation's size, processor_res unused.
        resize_mode: 'crop_and_resize',
        processor_res: null,
        low_threshold: 50,
        high_threshold: 150,
      },
      {
        model: 'depth',
        image: 'BBBB',
        module: 'none',
        conditioning_scale: 1,
        guidance_start: 0,
        guidance_end: 1,
        guess_mode: false,
        // The extension's defaults: Balanced, Crop and Resize; no preprocessor, so no processor_res.
        control_mode: 'balanced',
        resize_mode: 'crop_and_resize',
        processor_res: null,
        low_threshold: 100,
        high_threshold: 200,
      },
      expect.objectContaining({ model: 'depth', image: 'CCCC', control_mode: 'balanced' }),
    ]);
  });

  it('reads control_mode and resize_mode by number or label, and processor_res (-1: 512) unless pixel perfect', () => {
    const modes: Array<[unknown, string]> = [
      [0, 'balanced'],
      ['Balanced', 'balanced'],
      [1, 'prompt'],
      ['My prompt is more important', 'prompt'],
      [2, 'controlnet'],
      ['ControlNet is more important', 'controlnet'],
    ];
    for (const [control_mode, native] of modes)
      expect(
        a1111ControlNet(scripts({ model: 'depth', image: 'A', control_mode }), loaded, undefined)?.[0],
      ).toMatchObject({
        control_mode: native,
      });
    const resizes: Array<[unknown, string]> = [
      [0, 'just_resize'],
      ['Just Resize', 'just_resize'],
      [1, 'crop_and_resize'],
      ['Crop and Resize', 'crop_and_resize'],
      [2, 'resize_and_fill'],
      ['Resize and Fill', 'resize_and_fill'],
    ];
    for (const [resize_mode, native] of resizes)
      expect(
        a1111ControlNet(scripts({ model: 'depth', image: 'A', resize_mode }), loaded, undefined)?.[0],
      ).toMatchObject({
        resize_mode: native,
      });
    const canny = (extra: Record<string, unknown>) =>
      a1111ControlNet(
        scripts({ model: 'depth', image: 'A', module: 'canny', ...extra }),
        loaded,
        undefined,
      )?.[0];
    expect(canny({})).toMatchObject({ processor_res: 512 });
    expect(canny({ processor_res: -1 })).toMatchObject({ processor_res: 512 });
    expect(canny({ processor_res: 256 })).toMatchObject({ processor_res: 256 });
    expect(canny({ processor_res: 256, pixel_perfect: true })).toMatchObject({ processor_res: null });
  });

  it("docs/a1111-api.md's unit table gives each mode's label, number and native name as mapped", () => {
    const doc = readFileSync(new URL('../../../../../docs/a1111-api.md', import.meta.url), 'utf8');
    const row = (field: string) => doc.split('\n').find((line) => line.startsWith(`| \`${field}\` |`)) ?? '';
    const rows: Array<[string, Array<[string, number, string]>]> = [
      [
        'control_mode',
        [
          ['Balanced', 0, 'balanced'],
          ['My prompt is more important', 1, 'prompt'],
          ['ControlNet is more important', 2, 'controlnet'],
        ],
      ],
      [
        'resize_mode',
        [
          ['Just Resize', 0, 'just_resize'],
          ['Crop and Resize', 1, 'crop_and_resize'],
          ['Resize and Fill', 2, 'resize_and_fill'],
        ],
      ],
    ];
    for (const [field, modes] of rows)
      for (const [label, number, native] of modes) {
        expect(row(field)).toContain(`\`${label}\` (${number}`);
        expect(row(field)).toContain(`\`${native}\``);
        for (const value of [label, number])
          expect(
            a1111ControlNet(scripts({ model: 'depth', image: 'A', [field]: value }), loaded, undefined)?.[0],
          ).toMatchObject({ [field]: native });
      }
  });

  it('skips disabled units and model None; no units, no controlnet; img2img without an image uses the init image', () => {
    expect(a1111ControlNet({}, loaded, undefined)).toBeNull();
    expect(a1111ControlNet({ alwayson_scripts: {} }, loaded, undefined)).toBeNull();
    expect(
      a1111ControlNet(
        scripts({ enabled: false, model: 'depth', image: 'A' }, { model: 'None' }),
        loaded,
        undefined,
      ),
    ).toBeNull();
    // The script's title is matched without case, as A1111 matches it.
    const fromInit = a1111ControlNet(
      { alwayson_scripts: { ControlNet: { args: [{ model: 'depth' }] } } },
      loaded,
      'INIT',
    );
    expect(fromInit?.[0].image).toBe('INIT');
  });

  it('refuses (422) what it cannot run, naming the field', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ alwayson_scripts: [] }, /alwayson_scripts must be an object/],
      [{ alwayson_scripts: { controlnet: { args: 'x' } } }, /args must be a list/],
      [scripts('unit'), /args\[0\] must be an object/],
      [scripts({ model: 'openpose', image: 'A' }), /args\[0\]\.model: unknown ControlNet "openpose"/],
      [
        scripts({ model: 'depth', image: 'A', module: 'depth_midas' }),
        /args\[0\]\.module "depth_midas" is not served/,
      ],
      [scripts({ model: 'depth', image: 'A', control_mode: 3 }), /args\[0\]\.control_mode 3 is not one of/],
      [
        scripts({ model: 'depth', image: 'A', resize_mode: 'Envelope' }),
        /args\[0\]\.resize_mode "Envelope" is not one of/,
      ],
      [
        scripts({ model: 'depth', image: 'A', module: 'canny', processor_res: 10 }),
        /args\[0\]\.processor_res must be -1 or an integer/,
      ],
      [scripts({ model: 'depth' }), /args\[0\]\.image must be a base64 image/],
      [scripts({ model: 'depth', image: 'A', weight: '1' }), /args\[0\]\.weight must be a number/],
    ];
    for (const [body, message] of cases) {
      let error: unknown;
      try {
        a1111ControlNet(body as Record<string, unknown>, loaded, undefined);
      } catch (err) {
        error = err;
      }
      expect(error, String(message)).toMatchObject({
        httpStatus: 422,
        message: expect.stringMatching(message),
      });
    }
  });
});
