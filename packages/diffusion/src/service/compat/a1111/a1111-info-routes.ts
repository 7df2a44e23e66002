import { type Service, UnprocessableEntity } from '@tiffin/core';
import sharp from 'sharp';
import { parseInfotext } from '../../infotext.js';
import type { ServedModel } from '../../model-hash.js';
import { isPng, readPngText } from '../../png-text.js';
import type { A1111Checkpoints } from './a1111-checkpoints.js';
import type { A1111Options } from './a1111-options.js';
import { samplerListing, scheduleListing } from './samplers.js';

/** A route group's routes and the context its handlers get, as `Service.group` takes them. */
type Routes = Parameters<Service['group']>[0]['routes'];
type Ctx = Parameters<NonNullable<Routes[string][string]>>[0];

/** What the info routes answer from. */
export interface A1111InfoDeps {
  /** The checkpoint generations use now (`sd_model_checkpoint`; its hash computed once). */
  model(): Promise<ServedModel>;
  /** Every checkpoint a request may name. */
  checkpoints: A1111Checkpoints;
  options: A1111Options;
  /** The request's JSON object body, read within `maxBytes` (A1111's 422 for one that is no JSON object). */
  readJson(ctx: Ctx, maxBytes: number): Promise<Record<string, unknown>>;
}

/** A PNG sent to `png-info` is at most the size of an img2img upload. */
const MAX_PNG_INFO_BYTES = 32 * 1024 * 1024;

/** A1111's upscalers that need no model file, as its `/upscalers` lists them. */
const UPSCALERS = ['None', 'Lanczos', 'Nearest'].map((name) => ({
  name,
  model_name: null,
  model_path: null,
  model_url: null,
  scale: 4,
}));

/** A JSON `null` answer, as A1111's routes that return nothing give it (a returned null would be a 204). */
function answerNull(ctx: Ctx): undefined {
  ctx.type = 'application/json';
  ctx.body = 'null';
  return undefined;
}

/**
 * The A1111 listings and settings routes (A1111's `modules/api/api.py`): samplers, schedulers, upscalers,
 * sd-models (name, title, hash), cmd-flags, prompt-styles (none), refresh-checkpoints, png-info (a PNG's infotext
 * read back) and options (the settings this service honours; `POST` applies them and names the ignored keys in
 * `X-Tiffin-Ignored-Options`).
 */
export function a1111InfoRoutes(deps: A1111InfoDeps): Routes {
  return {
    '/sdapi/v1/samplers': { GET: () => samplerListing() },
    '/sdapi/v1/schedulers': { GET: () => scheduleListing() },
    '/sdapi/v1/upscalers': { GET: () => UPSCALERS },
    '/sdapi/v1/sd-models': {
      GET: async () =>
        (await deps.checkpoints.listed()).map((model) => ({
          title: model.title,
          model_name: model.name,
          hash: model.hash?.short ?? null,
          sha256: model.hash?.sha256 ?? null,
          // A1111 gives the file's path; a client never sees the server's paths here.
          filename: model.file,
          config: null,
        })),
    },
    '/sdapi/v1/cmd-flags': {
      GET: async () => ({ api: true, nowebui: true, ckpt: (await deps.model()).file, api_log: false }),
    },
    '/sdapi/v1/prompt-styles': { GET: () => [] },
    '/sdapi/v1/refresh-checkpoints': {
      // The models folder is looked at again: a changed weight file is hashed anew (the cache keys on size and time).
      POST: async (ctx) => {
        await deps.checkpoints.listed();
        return answerNull(ctx);
      },
    },
    '/sdapi/v1/png-info': {
      POST: async (ctx) => pngInfo(await deps.readJson(ctx, MAX_PNG_INFO_BYTES)),
    },
    '/sdapi/v1/options': {
      GET: () => options(deps),
      POST: async (ctx) => {
        const ignored = await deps.options.set(await deps.readJson(ctx, 1024 * 1024));
        // A1111 answers null; the keys this service does not act on are named in a header.
        const header = ignored
          .join(', ')
          .replace(/[^\x20-\x7e]/g, '?')
          .slice(0, 4000);
        if (header) ctx.set('x-tiffin-ignored-options', header);
        return answerNull(ctx);
      },
    },
  };
}

async function options(deps: A1111InfoDeps): Promise<Record<string, unknown>> {
  const model = await deps.model();
  return {
    sd_model_checkpoint: model.title,
    sd_checkpoint_hash: model.hash?.sha256 ?? null,
    ...deps.options.current,
    CLIP_stop_at_last_layers: 1,
    sd_vae: 'Automatic',
  };
}

/** `png-info`: the `parameters` infotext of a base64 PNG, its other text chunks, and the infotext parsed. */
async function pngInfo(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const value = body.image;
  if (typeof value !== 'string') throw new UnprocessableEntity('image must be a base64 string');
  const trimmed = value.trim();
  const comma = trimmed.startsWith('data:') ? trimmed.indexOf(',') : -1;
  const bytes = Buffer.from(trimmed.slice(comma + 1), 'base64');
  if (!isPng(bytes)) {
    // JPEG or WebP: no PNG text to read (A1111 answers an empty info); bytes that are no image are refused.
    try {
      await sharp(bytes).metadata();
    } catch {
      throw new UnprocessableEntity('image is not a PNG, JPEG or WebP image');
    }
    return { info: '', items: {}, parameters: {} };
  }
  const texts = readPngText(bytes);
  const { parameters: info = '', ...items } = texts;
  return { info, items, parameters: info ? parseInfotext(info) : {} };
}
