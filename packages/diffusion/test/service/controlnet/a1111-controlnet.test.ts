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
        guess_mode: true,
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
        low_threshold: 100,
        high_threshold: 200,
      },
      expect.objectContaining({ model: 'depth', image: 'CCCC', guess_mode: false }),
    ]);
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
      [scripts({ model: 'depth', image: 'A', control_mode: 1 }), /args\[0\]\.control_mode 1 is not served/],
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
