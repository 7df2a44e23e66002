import { type Service, UnprocessableEntity } from '@tiffin/core';
import { CANNY_DEFAULT_HIGH, CANNY_DEFAULT_LOW } from '../../controlnet/canny.js';
import { CONTROLNET_MODULES, type ControlNetModule } from '../../controlnet/controlnet-schema.js';
import type { Generator } from '../../generator.js';
import { a1111Errors } from './a1111-error.js';

type RouteGroup = Parameters<Service['group']>[0];

/** A1111's `control_mode` by number or label: only Balanced and "ControlNet is more important" (guess mode) run. */
const CONTROL_MODES: Record<string, boolean | null> = {
  '0': false,
  balanced: false,
  '1': null,
  'my prompt is more important': null,
  '2': true,
  'controlnet is more important': true,
};

/** `model: "control_v11p_sd15_canny [d14c016b]"`: the name without the hash A1111's model list appends. */
const HASH_SUFFIX = /\s*\[[0-9a-fA-F]{8,10}\]$/;

/** The extension's units in `alwayson_scripts` (its script title matched without case, as A1111 matches it). */
function controlnetArgs(body: Record<string, unknown>): unknown[] {
  const scripts = body.alwayson_scripts;
  if (scripts === undefined || scripts === null) return [];
  if (typeof scripts !== 'object' || Array.isArray(scripts))
    throw new UnprocessableEntity('alwayson_scripts must be an object of scripts');
  const entry = Object.entries(scripts).find(([title]) => title.toLowerCase() === 'controlnet')?.[1];
  if (entry === undefined || entry === null) return [];
  const args = (entry as { args?: unknown }).args;
  if (!Array.isArray(args))
    throw new UnprocessableEntity('alwayson_scripts.controlnet.args must be a list of units');
  return args;
}

function numberOr(unit: Record<string, unknown>, key: string, fallback: number, field: string): number {
  const value = unit[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new UnprocessableEntity(`${field}.${key} must be a number`);
  return value;
}

/**
 * The ControlNet extension's `alwayson_scripts.controlnet.args` as the native `controlnet` units: `enabled`
 * (default true), `module` (none or canny), `model` (a loaded ControlNet's name, A1111's ` [hash]` suffix
 * dropped; `None` disables the unit), `weight`, `image` or `input_image` (base64, or `{image}`; img2img without
 * one: the init image, as the extension does), `guidance_start`, `guidance_end`, `threshold_a` / `threshold_b`
 * (Canny's low and high; -1: 100 and 200), `control_mode` (Balanced, or "ControlNet is more important" as guess
 * mode). `processor_res`, `pixel_perfect` and `resize_mode` are read as pixel perfect: the map is made at the
 * generation's size, the picture resized whole (docs/a1111-api.md, ControlNet). Null when no unit is enabled.
 */
export function a1111ControlNet(
  body: Record<string, unknown>,
  loaded: readonly string[],
  initImage: unknown,
): Array<Record<string, unknown>> | null {
  const units: Array<Record<string, unknown>> = [];
  controlnetArgs(body).forEach((arg, i) => {
    const field = `alwayson_scripts.controlnet.args[${i}]`;
    if (typeof arg !== 'object' || arg === null || Array.isArray(arg))
      throw new UnprocessableEntity(`${field} must be an object (a ControlNet unit)`);
    const unit = arg as Record<string, unknown>;
    if (unit.enabled === false) return;
    const model = typeof unit.model === 'string' ? unit.model.replace(HASH_SUFFIX, '') : unit.model;
    if (model === undefined || model === null || model === 'None' || model === 'none') return;
    if (typeof model !== 'string' || !loaded.includes(model))
      throw new UnprocessableEntity(
        `${field}.model: unknown ControlNet ${JSON.stringify(model)} (GET /controlnet/model_list: ${loaded.join(', ') || 'none loaded'})`,
      );
    const module = String(unit.module ?? 'none').toLowerCase();
    if (!(CONTROLNET_MODULES as readonly string[]).includes(module))
      throw new UnprocessableEntity(
        `${field}.module ${JSON.stringify(unit.module)} is not served; this service runs ${CONTROLNET_MODULES.join(', ')} (bring other maps with module none)`,
      );
    const mode = CONTROL_MODES[String(unit.control_mode ?? 0).toLowerCase()];
    if (mode === undefined || mode === null)
      throw new UnprocessableEntity(
        `${field}.control_mode ${JSON.stringify(unit.control_mode)} is not served; Balanced (0) and "ControlNet is more important" (2) are`,
      );
    let image = unit.image ?? unit.input_image ?? initImage;
    if (typeof image === 'object' && image !== null && !Array.isArray(image))
      image = (image as { image?: unknown }).image;
    if (typeof image !== 'string' || image === '')
      throw new UnprocessableEntity(`${field}.image must be a base64 image`);
    const low = numberOr(unit, 'threshold_a', -1, field);
    const high = numberOr(unit, 'threshold_b', -1, field);
    units.push({
      model,
      image,
      module: module as ControlNetModule,
      conditioning_scale: numberOr(unit, 'weight', 1, field),
      guidance_start: numberOr(unit, 'guidance_start', 0, field),
      guidance_end: numberOr(unit, 'guidance_end', 1, field),
      guess_mode: mode || unit.guessmode === true,
      low_threshold: low < 0 ? CANNY_DEFAULT_LOW : low,
      high_threshold: high < 0 ? CANNY_DEFAULT_HIGH : high,
    });
  });
  return units.length > 0 ? units : null;
}

/** The extension's version as its `/controlnet/version` answers (clients check it is at least 2). */
const EXTENSION_VERSION = 2;

/**
 * The ControlNet extension's own routes, beside A1111's (`/controlnet/*`, the same auth and error shape): the
 * loaded ControlNets (`model_list`), the preprocessors served (`module_list`, with their sliders in
 * `module_detail`) and `version`.
 */
export function a1111ControlNetRoutes(
  generator: Generator,
  rules: Pick<RouteGroup, 'auth' | 'timeout'> = {},
): RouteGroup {
  return {
    prefix: '/controlnet',
    errors: a1111Errors,
    ...rules,
    routes: {
      '/controlnet/version': { GET: () => ({ version: EXTENSION_VERSION }) },
      '/controlnet/model_list': { GET: () => ({ model_list: [...(generator.context.controlnets ?? [])] }) },
      '/controlnet/module_list': {
        GET: () => ({
          module_list: [...CONTROLNET_MODULES],
          module_detail: {
            none: { model_free: false, sliders: [] },
            canny: {
              model_free: false,
              sliders: [
                { name: 'Preprocessor Resolution', value: 512, min: 64, max: 2048 },
                { name: 'Canny Low Threshold', value: CANNY_DEFAULT_LOW, min: 1, max: 255 },
                { name: 'Canny High Threshold', value: CANNY_DEFAULT_HIGH, min: 1, max: 255 },
              ],
            },
          },
        }),
      },
    },
  };
}
