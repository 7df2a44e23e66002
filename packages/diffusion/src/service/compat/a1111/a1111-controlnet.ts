import { type Service, UnprocessableEntity } from '@tiffin/core';
import type { ControlMode } from '../../../pipeline/types.js';
import { CANNY_DEFAULT_HIGH, CANNY_DEFAULT_LOW } from '../../controlnet/canny.js';
import { base64Bytes } from '../../controlnet/controlnet-request.js';
import {
  CONTROLNET_MODULES,
  type ControlNetModule,
  type ResizeMode,
} from '../../controlnet/controlnet-schema.js';
import type { Generator } from '../../generator.js';
import { cannyOffThread, uploadMaxPixels } from '../../kinds/images.js';
import { encodeGenerated } from '../../output-format.js';
import { decodeUpload, UnreadableImage } from '../decode-upload.js';
import { a1111Errors } from './a1111-error.js';

type RouteGroup = Parameters<Service['group']>[0];
type Ctx = Parameters<NonNullable<RouteGroup['routes'][string][string]>>[0];

/** `/controlnet/detect`: at most this many pictures a call, in a body of at most 32 MiB (A1111's img2img bound). */
const MAX_DETECT_IMAGES = 4;
const MAX_DETECT_BYTES = 32 * 1024 * 1024;

/** The extension's `control_mode` by number or label (matched without case), as the native names. */
const CONTROL_MODES: Record<string, ControlMode> = {
  '0': 'balanced',
  balanced: 'balanced',
  '1': 'prompt',
  'my prompt is more important': 'prompt',
  '2': 'controlnet',
  'controlnet is more important': 'controlnet',
};

/** The extension's `resize_mode` by number or label (matched without case), as the native names. */
const RESIZE_MODES: Record<string, ResizeMode> = {
  '0': 'just_resize',
  'just resize': 'just_resize',
  '1': 'crop_and_resize',
  'crop and resize': 'crop_and_resize',
  '2': 'resize_and_fill',
  'resize and fill': 'resize_and_fill',
};

/** The extension's default preprocessor resolution (`processor_res` -1 or absent, pixel perfect off). */
const DEFAULT_PROCESSOR_RES = 512;

/** A mode field by number or label: the native name, or a 422 listing what is served. */
function modeOf<T>(table: Record<string, T>, value: unknown, fallback: T, field: string, served: string): T {
  if (value === undefined || value === null) return fallback;
  const mode = table[String(value).toLowerCase()];
  if (mode === undefined)
    throw new UnprocessableEntity(`${field} ${JSON.stringify(value)} is not one of ${served}`);
  return mode;
}

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
 * (Canny's low and high; -1: 100 and 200), `control_mode` and `resize_mode` (numbers or labels; default Balanced and
 * "Crop and Resize", the extension's), `processor_res` (-1: 512) unless `pixel_perfect` (docs/a1111-api.md,
 * ControlNet). Null when no unit is enabled.
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
    const controlMode = modeOf(
      CONTROL_MODES,
      unit.control_mode,
      'balanced',
      `${field}.control_mode`,
      'Balanced (0), "My prompt is more important" (1), "ControlNet is more important" (2)',
    );
    const resizeMode = modeOf(
      RESIZE_MODES,
      unit.resize_mode,
      'crop_and_resize',
      `${field}.resize_mode`,
      '"Just Resize" (0), "Crop and Resize" (1), "Resize and Fill" (2)',
    );
    // Pixel perfect, or no preprocessor: the map is made at the generation's size; else at processor_res (-1: 512).
    const res = numberOr(unit, 'processor_res', -1, field);
    const processorRes =
      unit.pixel_perfect === true || module === 'none' ? null : res < 0 ? DEFAULT_PROCESSOR_RES : res;
    if (
      processorRes !== null &&
      (!Number.isInteger(processorRes) || processorRes < 64 || processorRes > 2048)
    )
      throw new UnprocessableEntity(`${field}.processor_res must be -1 or an integer in [64, 2048]`);
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
      guess_mode: unit.guessmode === true,
      control_mode: controlMode,
      resize_mode: resizeMode,
      processor_res: processorRes,
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
 * `module_detail`), `version`, and `detect`: a module's maps of pictures, as the extension previews them.
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
      '/controlnet/detect': { POST: (ctx) => detect(ctx, uploadMaxPixels(generator.context.limits)) },
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

/**
 * `POST /controlnet/detect` (`controlnet_module`, `controlnet_input_images`, `controlnet_threshold_a`/`_b`): each
 * picture's map as a base64 PNG, made at the picture's own size (`controlnet_processor_res` is not used: the
 * generation routes make maps at the generation's size).
 */
async function detect(ctx: Ctx, maxPixels: number) {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse((await ctx.state.body(MAX_DETECT_BYTES)).toString('utf8'));
  } catch {
    throw new UnprocessableEntity('The body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new UnprocessableEntity('The body must be a JSON object');
  const module = String(body.controlnet_module ?? 'none').toLowerCase();
  if (!(CONTROLNET_MODULES as readonly string[]).includes(module))
    throw new UnprocessableEntity(
      `controlnet_module ${JSON.stringify(body.controlnet_module)} is not served; this service runs ${CONTROLNET_MODULES.join(', ')}`,
    );
  const inputs = body.controlnet_input_images;
  if (!Array.isArray(inputs) || inputs.length === 0 || inputs.length > MAX_DETECT_IMAGES)
    throw new UnprocessableEntity(
      `controlnet_input_images must be a list of 1 to ${MAX_DETECT_IMAGES} base64 images`,
    );
  const low = numberOr(body, 'controlnet_threshold_a', -1, 'body');
  const high = numberOr(body, 'controlnet_threshold_b', -1, 'body');
  const images: string[] = [];
  for (const [i, value] of inputs.entries()) {
    const field = `controlnet_input_images[${i}]`;
    if (typeof value !== 'string') throw new UnprocessableEntity(`${field} must be a base64 image`);
    let picture: Awaited<ReturnType<typeof decodeUpload>>;
    try {
      picture = await decodeUpload(base64Bytes(value, field), maxPixels, false, ctx.state.signal);
    } catch (err) {
      if (err instanceof UnreadableImage) throw new UnprocessableEntity(`${field} ${err.message}`);
      throw err;
    }
    const map =
      module === 'canny'
        ? await cannyOffThread(
            picture,
            low < 0 ? CANNY_DEFAULT_LOW : low,
            high < 0 ? CANNY_DEFAULT_HIGH : high,
            ctx.state.signal,
          )
        : picture;
    images.push((await encodeGenerated(map.data, map.width, map.height, 'png')).toString('base64'));
  }
  return { images, info: 'Success' };
}
