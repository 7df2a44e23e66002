import type { Service } from '@tiffin/core';
import sharp from 'sharp';
import type { Generator } from '../../generator.js';
import { decodeUpload, UnreadableImage } from '../decode-upload.js';
import { compatRequest, type UploadedImage } from '../generator.js';
import { requestBody } from '../request-body.js';
import { requestSignal } from '../request-signal.js';
import { OpenAIError, toOpenAIError } from './openai-error.js';
import { imagesRequest } from './openai-request.js';
import { type ImagesAnswer, imagesAnswer } from './openai-response.js';
import { ResultStore } from './result-store.js';

/** Koa middleware as `Service.mount` takes it. */
type MountedMiddleware = Parameters<Service['mount']>[0];
/** The Koa context a mounted middleware gets. */
type ParameterizedContext = Parameters<MountedMiddleware>[0];

/** Where `response_format: "url"` results are served. */
export const RESULTS_PATH = '/v1/images/results/';

/** A JSON body is prompts and a few numbers; an upload is at most a few images of the model's size. */
const MAX_JSON_BYTES = 1024 * 1024;
const MAX_FORM_BYTES = 32 * 1024 * 1024;

/** Marks a request that carried the service's token (the private mount runs only for those). */
const AUTHORIZED = Symbol('openai-authorized');

export interface OpenAIRoutesOptions {
  generator: Generator;
  /** The id `GET /v1/models` lists (the service's name). */
  modelId: string;
  /** Seconds a `url` result is served (default 600), how many are kept (default 64) and their bytes (64 MiB). */
  results?: { ttlSeconds?: number; maxCount?: number; maxBytes?: number };
}

/**
 * The OpenAI Images API on a diffusion service, on its own kinds and queue: `POST /v1/images/generations`
 * (text2img), `/v1/images/edits` (inpaint with a mask, else img2img), `/v1/images/variations` (img2img with no
 * prompt), `GET /v1/models`, and `GET /v1/images/results/<id>` for `url` results. Two mounts: a private one that
 * only marks requests carrying the API token, then a public one that answers, so a missing token is a 401 in
 * OpenAI's error shape like every other error of these routes.
 */
export function openAIRoutes(options: OpenAIRoutesOptions): {
  marker: MountedMiddleware;
  routes: MountedMiddleware;
} {
  const { generator, modelId } = options;
  const store = new ResultStore({
    ttlSeconds: options.results?.ttlSeconds ?? 600,
    maxCount: options.results?.maxCount ?? 64,
    maxBytes: options.results?.maxBytes ?? 64 * 1024 ** 2,
  });
  const marker: MountedMiddleware = (ctx, next) => {
    if (ctx.path.startsWith('/v1/images') || ctx.path.startsWith('/v1/models'))
      (ctx.state as Record<symbol, boolean>)[AUTHORIZED] = true;
    return next();
  };

  const routes: MountedMiddleware = async (ctx, next) => {
    const path = ctx.path;
    if (path.startsWith(RESULTS_PATH) && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      // Public like OpenAI's own result URLs: the id is unguessable and short-lived.
      const found = store.get(path.slice(RESULTS_PATH.length));
      if (!found)
        return answerError(
          ctx,
          new OpenAIError(404, 'This result expired or never existed', null, 'not_found'),
        );
      ctx.set('cache-control', 'private, max-age=60');
      ctx.type = found.mediaType;
      ctx.body = found.bytes;
      return;
    }
    const route = ROUTES[path];
    if (!route) return next();
    try {
      if (!(ctx.state as Record<symbol, boolean>)[AUTHORIZED])
        throw new OpenAIError(
          401,
          'Incorrect or missing API key: send Authorization: Bearer <token>',
          null,
          'invalid_api_key',
        );
      if (ctx.method !== route.method)
        throw new OpenAIError(405, `${path} takes ${route.method}`, null, 'method_not_allowed');
      if (route.kind === 'models') {
        ctx.body = {
          object: 'list',
          data: [{ id: modelId, object: 'model', created: 0, owned_by: 'tiffin' }],
        };
        return;
      }
      // The generation stops at its next step when the request's deadline passes or its client leaves.
      ctx.body = await serveImages(ctx, route.kind, requestSignal(ctx));
    } catch (err) {
      answerError(ctx, toOpenAIError(err));
    }
  };

  async function serveImages(
    ctx: ParameterizedContext,
    kind: 'generations' | 'edits' | 'variations',
    signal: AbortSignal,
  ): Promise<ImagesAnswer> {
    const maxPixels = generator.maxSize * generator.maxSize;
    if (kind === 'generations') {
      const request = imagesRequest(await readJson(ctx), generator, 'generations');
      const [width, height] = request.size ?? [generator.defaultSize, generator.defaultSize];
      requireKind('text2img', 'generations');
      const body = {
        prompt: request.prompt,
        height,
        width,
        num_images_per_prompt: request.n,
        seed: request.seed,
      };
      const images = await generator.start({ request: compatRequest(generator, body), signal }).result;
      return imagesAnswer(images, request, store, originOf(ctx));
    }
    const form = await readForm(ctx);
    const fields: Record<string, unknown> = {};
    for (const [name, value] of form.entries()) if (typeof value === 'string') fields[name] = value;
    const request = imagesRequest(fields, generator, kind);
    const image = await uploaded(form, ['image', 'image[]'], 'image', maxPixels);
    if (!image)
      throw new OpenAIError(
        400,
        'image is required: a PNG, JPEG or WebP file',
        'image',
        'missing_required_parameter',
      );
    const sized = request.size ? await resized(image, request.size) : image;
    const common = { prompt: request.prompt, num_images_per_prompt: request.n, seed: request.seed };
    const mask = kind === 'edits' ? await uploaded(form, ['mask'], 'mask', maxPixels, true) : undefined;
    let images: Awaited<ReturnType<Generator['start']>['result']>;
    if (mask) {
      requireKind('inpaint', kind);
      if (mask.width !== image.width || mask.height !== image.height)
        throw new OpenAIError(400, 'mask must be the same size as image', 'mask', 'invalid_image_dimensions');
      const maskSized = request.size ? await resized(mask, request.size) : mask;
      const inpaint = compatRequest(generator, common, {
        image: sized,
        mask: repaintWhereTransparent(maskSized),
      });
      images = await generator.start({ request: inpaint, signal }).result;
    } else {
      requireKind('img2img', kind);
      const redraw = compatRequest(generator, common, { image: sized });
      images = await generator.start({ request: redraw, signal }).result;
    }
    return imagesAnswer(images, request, store, originOf(ctx));
  }

  function requireKind(name: string, route: string): void {
    if (!generator.kinds.includes(name))
      throw new OpenAIError(
        400,
        `This model does not serve ${route} (it serves ${generator.kinds.join(', ')})`,
        null,
        'unsupported_operation',
      );
  }

  return { marker, routes };
}

const ROUTES: Readonly<
  Record<string, { method: string; kind: 'generations' | 'edits' | 'variations' | 'models' }>
> = {
  '/v1/images/generations': { method: 'POST', kind: 'generations' },
  '/v1/images/edits': { method: 'POST', kind: 'edits' },
  '/v1/images/variations': { method: 'POST', kind: 'variations' },
  '/v1/models': { method: 'GET', kind: 'models' },
};

function answerError(ctx: ParameterizedContext, err: OpenAIError): void {
  ctx.status = err.status;
  if (err.status === 401) ctx.set('www-authenticate', 'Bearer realm="tiffin"');
  ctx.body = err.body();
}

/** The body, read by core within `maxBytes`; its 413 and 400 in OpenAI's shape. */
function readBody(ctx: ParameterizedContext, maxBytes: number): Promise<Buffer> {
  return requestBody(ctx, maxBytes, {
    tooLarge: () =>
      new OpenAIError(413, `The request body is larger than ${maxBytes} bytes`, null, 'request_too_large'),
    unreadable: () => new OpenAIError(400, 'The request body could not be read', null, 'invalid_body'),
  });
}

async function readJson(ctx: ParameterizedContext): Promise<Record<string, unknown>> {
  if (!ctx.is('application/json'))
    throw new OpenAIError(
      400,
      'The body must be JSON (Content-Type: application/json)',
      null,
      'invalid_content_type',
    );
  const text = (await readBody(ctx, MAX_JSON_BYTES)).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new OpenAIError(400, 'The body is not valid JSON', null, 'invalid_json');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new OpenAIError(400, 'The body must be a JSON object', null, 'invalid_json');
  return value as Record<string, unknown>;
}

async function readForm(ctx: ParameterizedContext): Promise<FormData> {
  const type = ctx.get('content-type');
  if (!ctx.is('multipart/form-data'))
    throw new OpenAIError(
      400,
      'The body must be multipart/form-data with the image file',
      null,
      'invalid_content_type',
    );
  const body = await readBody(ctx, MAX_FORM_BYTES);
  try {
    // The web platform's multipart parser (undici), on a body already bounded above.
    return await new Response(new Uint8Array(body), { headers: { 'content-type': type } }).formData();
  } catch {
    throw new OpenAIError(400, 'The multipart body is malformed', null, 'invalid_multipart');
  }
}

/** The first file among `names`, decoded (400 for a field that is text or bytes that are no image). */
async function uploaded(
  form: FormData,
  names: readonly string[],
  param: string,
  maxPixels: number,
  keepAlpha = false,
): Promise<UploadedImage | undefined> {
  const value = names.map((n) => form.get(n)).find((v) => v !== null);
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string')
    throw new OpenAIError(400, `${param} must be a file`, param, 'invalid_image');
  try {
    return await decodeUpload(new Uint8Array(await value.arrayBuffer()), maxPixels, keepAlpha);
  } catch (err) {
    if (err instanceof UnreadableImage)
      throw new OpenAIError(400, `${param} ${err.message}`, param, 'invalid_image');
    throw err;
  }
}

/** An image resized to `size` (the client's `size` for an edit or variation). */
async function resized(image: UploadedImage, [width, height]: [number, number]): Promise<UploadedImage> {
  if (image.width === width && image.height === height) return image;
  const { data, info } = await sharp(image.data, {
    raw: { width: image.width, height: image.height, channels: image.channels as 1 | 2 | 3 | 4 },
  })
    .resize(width, height, { fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: info.channels, data: new Uint8Array(data) };
}

/**
 * OpenAI's mask marks the area to edit by transparency; the inpaint kind repaints white. A mask with alpha
 * becomes white where it is transparent; one without alpha is taken as it is (white = repaint).
 */
function repaintWhereTransparent(mask: UploadedImage): UploadedImage {
  if (mask.channels !== 4) return mask;
  const pixels = mask.width * mask.height;
  const data = new Uint8Array(pixels * 3);
  for (let i = 0; i < pixels; i++) data.fill(mask.data[i * 4 + 3] < 128 ? 255 : 0, i * 3, i * 3 + 3);
  return { width: mask.width, height: mask.height, channels: 3, data };
}

/**
 * The service's origin as the client reached it (its Host header, checked to be a host name): `url` results are
 * absolute links the client can fetch as they are. A Host that is no host name gives a path-only link.
 */
function originOf(ctx: ParameterizedContext): string {
  const host = ctx.get('host');
  if (!/^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:\d{1,5})?$/.test(host)) return '';
  const encrypted = (ctx.req.socket as { encrypted?: boolean }).encrypted === true;
  return `${encrypted ? 'https' : 'http'}://${host}`;
}
