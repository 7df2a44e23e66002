import { NotFound, type Service } from '@tiffin/core';
import { echoedName } from '../../checkpoint-catalog.js';
import type { Generator } from '../../generator.js';
import { decodeUpload, UnreadableImage } from '../decode-upload.js';
import { fittedSize } from '../fitted-size.js';
import { compatRequest, type UploadedImage } from '../generator.js';
import { invalidRequest, openAIErrors } from './openai-error.js';
import { type ImagesRequest, imagesRequest } from './openai-request.js';
import { type ImagesAnswer, imagesAnswer } from './openai-response.js';
import { imageEventStream, streamRequest } from './openai-stream.js';
import { ResultStore } from './result-store.js';
import { combinedImage, MAX_EDIT_IMAGES, resizedTo } from './several-images.js';

/** A route group as `Service.group` takes it, and the context its handlers get (signal and body reader in `state`). */
type RouteGroup = Parameters<Service['group']>[0];
type ParameterizedContext = Parameters<NonNullable<RouteGroup['routes'][string][string]>>[0];

/** Where `response_format: "url"` results are served. */
export const RESULTS_PATH = '/v1/images/results/';
/** The paths of OpenAI's API: the group answers every one of them (an unknown one is its 404). */
const OPENAI_PREFIX = '/v1';

/** A JSON body is prompts and a few numbers; an upload is at most a few images of the model's size. */
const MAX_JSON_BYTES = 1024 * 1024;
const MAX_FORM_BYTES = 32 * 1024 * 1024;

export interface OpenAIRoutesOptions {
  generator: Generator;
  /** The id `GET /v1/models` lists (the service's name). */
  modelId: string;
  /** Seconds a `url` result is served (default 600), how many are kept (default 64) and their bytes (64 MiB). */
  results?: { ttlSeconds?: number; maxCount?: number; maxBytes?: number };
  /** The routes' deadline in seconds (default: the server's `timeout`). */
  timeout?: number;
}

/**
 * The OpenAI Images API on a diffusion service, on its own kinds and queue, as two route groups (docs/server.md,
 * route groups) in OpenAI's error shape (`openAIErrors`): `/v1` with the service's API token (bearer) for
 * `POST /v1/images/generations` (text2img), `/v1/images/edits` (inpaint with a mask, else img2img),
 * `/v1/images/variations` (img2img with no prompt) and `GET /v1/models`; and `GET /v1/images/results/<id>` for
 * `url` results, public like OpenAI's own result URLs (the id is unguessable and short-lived). A generation stops
 * at its next step when the request's deadline passes or its client leaves (`ctx.state.signal`).
 */
export function openAIRoutes(options: OpenAIRoutesOptions): RouteGroup[] {
  const { generator, modelId } = options;
  const store = new ResultStore({
    ttlSeconds: options.results?.ttlSeconds ?? 600,
    maxCount: options.results?.maxCount ?? 64,
    maxBytes: options.results?.maxBytes ?? 64 * 1024 ** 2,
  });
  const rules = {
    errors: openAIErrors,
    maxBodySize: MAX_FORM_BYTES,
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  };
  const results: RouteGroup = {
    ...rules,
    prefix: RESULTS_PATH.slice(0, -1),
    auth: 'public',
    routes: {
      [`${RESULTS_PATH}*`]: {
        GET: (ctx) => {
          const found = store.get(ctx.path.slice(RESULTS_PATH.length));
          if (!found) throw new NotFound('This result expired or never existed');
          ctx.set('cache-control', 'private, max-age=60');
          ctx.type = found.mediaType;
          ctx.body = found.bytes;
        },
      },
    },
  };
  const api: RouteGroup = {
    ...rules,
    prefix: OPENAI_PREFIX,
    routes: {
      '/v1/images/generations': { POST: (ctx) => serveImages(ctx, 'generations', ctx.state.signal) },
      '/v1/images/edits': { POST: (ctx) => serveImages(ctx, 'edits', ctx.state.signal) },
      '/v1/images/variations': { POST: (ctx) => serveImages(ctx, 'variations', ctx.state.signal) },
      '/v1/models': { GET: () => ({ object: 'list', data: listedModels() }) },
    },
  };

  async function serveImages(
    ctx: ParameterizedContext,
    kind: 'generations' | 'edits' | 'variations',
    signal: AbortSignal,
  ): Promise<ImagesAnswer | undefined> {
    const maxPixels = generator.maxSize * generator.maxSize;
    if (kind === 'generations') {
      const json = await readJson(ctx);
      const request = imagesRequest(json, generator, 'generations');
      const streamed = streamRequest(json);
      const [width, height] = request.size ?? [generator.defaultSize, generator.defaultSize];
      requireKind('text2img', 'generations');
      const body = {
        prompt: request.prompt,
        height,
        width,
        num_images_per_prompt: request.n,
        seed: request.seed,
      };
      const text2img = await compatRequest(
        generator,
        { ...body, model: chosenModel(json.model) },
        {},
        signal,
      );
      // The kind's own queue (--concurrency, --queue), ordered by Priority, as its native API's calls are.
      await ctx.state.queue(text2img.input.kind);
      if (streamed.stream)
        return stream(ctx, 'generations', text2img, signal, streamed.partialImages, request, {
          width,
          height,
        });
      const images = await generator.start({ request: text2img, signal }).result;
      return imagesAnswer(images, request, store, originOf(ctx));
    }
    const form = await readForm(ctx);
    const fields: Record<string, unknown> = {};
    for (const [name, value] of form.entries()) if (typeof value === 'string') fields[name] = value;
    const request = imagesRequest(fields, generator, kind);
    const streamed = kind === 'edits' ? streamRequest(fields) : { stream: false, partialImages: 0 };
    // Several `image[]` parts (the openai SDK's form of an image list) are one edit of all of them.
    const images = await uploadedAll(form, ['image', 'image[]'], 'image', maxPixels, signal);
    const image = images.length > 0 ? await combinedImage(images) : undefined;
    if (!image)
      throw invalidRequest('image is required: a PNG, JPEG or WebP file', {
        param: 'image',
        code: 'MISSING_REQUIRED_PARAMETER',
      });
    const sized = request.size ? await resizedTo(image, ...request.size) : image;
    const common = {
      prompt: request.prompt,
      num_images_per_prompt: request.n,
      seed: request.seed,
      model: chosenModel(fields.model),
    };
    const mask =
      kind === 'edits' ? await uploaded(form, ['mask'], 'mask', maxPixels, true, signal) : undefined;
    let edit: Awaited<ReturnType<typeof compatRequest>>;
    if (mask) {
      requireKind('inpaint', kind);
      if (mask.width !== image.width || mask.height !== image.height)
        throw invalidRequest('mask must be the same size as image', {
          param: 'mask',
          code: 'INVALID_IMAGE_DIMENSIONS',
        });
      const maskSized = request.size ? await resizedTo(mask, ...request.size) : mask;
      edit = await compatRequest(
        generator,
        common,
        { image: sized, mask: repaintWhereTransparent(maskSized) },
        signal,
      );
    } else {
      requireKind('img2img', kind);
      edit = await compatRequest(generator, common, { image: sized }, signal);
    }
    await ctx.state.queue(edit.input.kind);
    if (streamed.stream) {
      const size = fittedSize(sized.width, sized.height, generator.maxSize);
      return stream(ctx, 'edits', edit, signal, streamed.partialImages, request, size);
    }
    const edited = await generator.start({ request: edit, signal }).result;
    return imagesAnswer(edited, request, store, originOf(ctx));
  }

  /** A `stream: true` answer: its server-sent events, the partial images from the generation's step previews. */
  function stream(
    ctx: ParameterizedContext,
    route: 'generations' | 'edits',
    request: Awaited<ReturnType<typeof compatRequest>>,
    signal: AbortSignal,
    partialImages: number,
    images: ImagesRequest,
    size: { width: number; height: number },
  ): undefined {
    ctx.type = 'text/event-stream';
    ctx.set('cache-control', 'no-cache');
    ctx.body = imageEventStream({
      route,
      partialImages,
      format: images.outputFormat,
      size,
      run: (onPreview) => {
        const run = generator.start({ request, signal, preview: partialImages > 0 });
        const stop = generator.events.subscribe((e) => {
          if (e.type === 'step' && e.preview) onPreview(e.step, e.totalSteps, e.preview.image);
        }, run.jobId);
        return run.result.finally(stop);
      },
    });
    return undefined;
  }

  /**
   * `GET /v1/models`: the service's name (its start model); with a models folder, every checkpoint by its name too.
   */
  function listedModels() {
    const entry = (id: string) => ({ id, object: 'model', created: 0, owned_by: 'tiffin' });
    const { catalog } = generator;
    if (!catalog.selectable) return [entry(modelId)];
    catalog.refresh();
    return [entry(modelId), ...catalog.list().map((c) => entry(c.name))];
  }

  /**
   * The checkpoint `model` names: absent or the service's name is the start model. Without a models folder any
   * other `model` is ignored as before (clients send `dall-e-3`); with one, a name it does not list is a 404
   * `model_not_found` naming `param: "model"`.
   */
  function chosenModel(value: unknown): string | null {
    const { catalog } = generator;
    if (!catalog.selectable || value === undefined || value === null || value === '' || value === modelId)
      return null;
    const name = typeof value === 'string' ? value : String(value);
    if (!catalog.find(name))
      throw new NotFound(
        `The model ${echoedName(name)} does not exist on this service (see GET /v1/models)`,
        {
          code: 'NOT_FOUND',
          detail: { param: 'model' },
        },
      );
    return name;
  }

  function requireKind(name: string, route: string): void {
    if (!generator.kinds.includes(name))
      throw invalidRequest(`This model does not serve ${route} (it serves ${generator.kinds.join(', ')})`, {
        code: 'UNSUPPORTED_OPERATION',
      });
  }

  // The public results first: the `/v1` group answers every other path under it.
  return [results, api];
}

async function readJson(ctx: ParameterizedContext): Promise<Record<string, unknown>> {
  if (!ctx.is('application/json'))
    throw invalidRequest('The body must be JSON (Content-Type: application/json)', {
      code: 'INVALID_CONTENT_TYPE',
    });
  const text = (await ctx.state.body(MAX_JSON_BYTES)).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest('The body is not valid JSON', { code: 'INVALID_JSON' });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidRequest('The body must be a JSON object', { code: 'INVALID_JSON' });
  return value as Record<string, unknown>;
}

async function readForm(ctx: ParameterizedContext): Promise<FormData> {
  const type = ctx.get('content-type');
  if (!ctx.is('multipart/form-data'))
    throw invalidRequest('The body must be multipart/form-data with the image file', {
      code: 'INVALID_CONTENT_TYPE',
    });
  const body = await ctx.state.body(MAX_FORM_BYTES);
  try {
    // The web platform's multipart parser (undici), on a body already bounded above.
    return await new Response(new Uint8Array(body), { headers: { 'content-type': type } }).formData();
  } catch {
    throw invalidRequest('The multipart body is malformed', { code: 'INVALID_MULTIPART' });
  }
}

/** The first file among `names`, decoded (400 for a field that is text or bytes that are no image). */
async function uploaded(
  form: FormData,
  names: readonly string[],
  param: string,
  maxPixels: number,
  keepAlpha = false,
  signal?: AbortSignal,
): Promise<UploadedImage | undefined> {
  const value = names.map((n) => form.get(n)).find((v) => v !== null);
  if (value === undefined || value === null) return undefined;
  return decodedPart(value, param, maxPixels, keepAlpha, signal);
}

/** Every file among `names`, in order, decoded: at most {@link MAX_EDIT_IMAGES}, as OpenAI's API bounds them. */
async function uploadedAll(
  form: FormData,
  names: readonly string[],
  param: string,
  maxPixels: number,
  signal?: AbortSignal,
): Promise<UploadedImage[]> {
  const values = names.flatMap((n) => form.getAll(n));
  if (values.length > MAX_EDIT_IMAGES)
    throw invalidRequest(`at most ${MAX_EDIT_IMAGES} images per edit, not ${values.length}`, {
      param,
      code: 'INVALID_VALUE',
    });
  const images: UploadedImage[] = [];
  for (const value of values) images.push(await decodedPart(value, param, maxPixels, false, signal));
  return images;
}

/** One form part as an image: a file sharp can read within `maxPixels` (a size error over it). */
async function decodedPart(
  value: File | string,
  param: string,
  maxPixels: number,
  keepAlpha: boolean,
  /** The request's: a decode still waiting for an upload thread when it aborts is dropped. */
  signal?: AbortSignal,
): Promise<UploadedImage> {
  if (typeof value === 'string')
    throw invalidRequest(`${param} must be a file`, { param, code: 'INVALID_IMAGE' });
  try {
    return await decodeUpload(new Uint8Array(await value.arrayBuffer()), maxPixels, keepAlpha, signal);
  } catch (err) {
    // Over the size bound: a size error the client can act on, never "not an image".
    if (err instanceof UnreadableImage && err.tooLarge)
      throw invalidRequest(`${param} ${err.message}`, { param, code: 'IMAGE_TOO_LARGE' });
    if (err instanceof UnreadableImage)
      throw invalidRequest(`${param} ${err.message}`, { param, code: 'INVALID_IMAGE' });
    throw err;
  }
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
