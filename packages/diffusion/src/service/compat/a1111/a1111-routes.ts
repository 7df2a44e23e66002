import { BadInput, type Service, UnprocessableEntity } from '@tiffin/core';
import { GenerationCancelled } from '../../../pipeline/cancel.js';
import { ignoredWordsHeader } from '../../../tokenizer/ignored-words.js';
import type { Generator } from '../../generator.js';
import { IGNORED_WORDS_HEADER, type IgnoredWordsReport } from '../../ignored-words-report.js';
import { rgbInput } from '../../kinds/images.js';
import { type ServedModel, servedModel } from '../../model-hash.js';
import { encodeGenerated } from '../../output-format.js';
import type { JobImage } from '../../worker-protocol.js';
import { callerOf } from '../caller.js';
import { decodeUpload, UnreadableImage } from '../decode-upload.js';
import { compatRequest, type UploadedImage } from '../generator.js';
import { A1111Checkpoints } from './a1111-checkpoints.js';
import { a1111Errors } from './a1111-error.js';
import { a1111Image } from './a1111-images.js';
import { a1111InfoRoutes } from './a1111-info-routes.js';
import { A1111Options } from './a1111-options.js';
import { A1111Progress } from './a1111-progress.js';
import { type A1111Plan, a1111Plan } from './a1111-request.js';
import { partialImage } from './partial-image.js';

/** A route group as `Service.group` takes it, and the context its handlers get (signal and body reader in `state`). */
type RouteGroup = Parameters<Service['group']>[0];
type Ctx = Parameters<NonNullable<RouteGroup['routes'][string][string]>>[0];

/** The paths of A1111's API: the group answers every one of them (an unknown one is its 404). */
export const A1111_PREFIX = '/sdapi/v1';

/** A txt2img or img2img body carries base64 images (init images, ControlNet units) of at most the model's size. */
const MAX_IMG2IMG_BYTES = 32 * 1024 * 1024;

/**
 * AUTOMATIC1111's `/sdapi/v1/*` on a diffusion service as a route group (docs/server.md, route groups) in A1111's
 * error shape (`a1111Errors`), on its own kinds and queue: txt2img, img2img (inpainting with a `mask`), progress
 * (with the previews as `current_image`), interrupt and skip, and the read-only listings (samplers, sd-models,
 * loras, options). Progress, interrupt and skip act on the caller's own jobs (`callerOf`). A generation stops at
 * its next step when its request's deadline passes or its client leaves (`ctx.state.signal`). Its auth mode is
 * the service's API token (bearer) unless `auth` says otherwise (A1111's `--api-auth` Basic users).
 */
export function a1111Routes(
  generator: Generator,
  rules: Pick<RouteGroup, 'auth' | 'timeout'> = {},
  ignoredWords?: IgnoredWordsReport,
): RouteGroup {
  const progress = new A1111Progress();
  // The checkpoints, the settings (the global `sd_model_checkpoint` among them) and the chosen model's name and
  // hash (its weights hashed once, in the background from the start).
  const checkpoints = new A1111Checkpoints(generator.catalog);
  const options = new A1111Options(checkpoints);
  const model = (): Promise<ServedModel> => servedModel(options.checkpoint.path);
  model().catch(() => {});
  const routes: RouteGroup['routes'] = {
    '/sdapi/v1/txt2img': { POST: (ctx) => generate(ctx, false) },
    '/sdapi/v1/img2img': { POST: (ctx) => generate(ctx, true) },
    '/sdapi/v1/progress': {
      GET: (ctx) => progressAnswer(callerOf(ctx.req), ctx.query.skip_current_image === 'true'),
    },
    '/sdapi/v1/interrupt': {
      POST: (ctx) => {
        progress.interrupt(callerOf(ctx.req));
        return {};
      },
    },
    '/sdapi/v1/skip': {
      POST: (ctx) => {
        progress.skip(callerOf(ctx.req));
        return {};
      },
    },
    '/sdapi/v1/loras': {
      GET: async () => {
        return (await generator.listLoras()).map((l) => {
          const name = l.name.replace(/\.safetensors$/, '');
          return { name, alias: name, path: l.name, metadata: {} };
        });
      },
    },
    ...a1111InfoRoutes({ model, checkpoints, options, readJson }),
  };
  return { prefix: A1111_PREFIX, errors: a1111Errors, maxBodySize: MAX_IMG2IMG_BYTES, ...rules, routes };

  /** The checkpoint `override_settings.sd_model_checkpoint` names (a 422 for an unknown one), else the global one. */
  async function overridden(settings: unknown) {
    const named =
      typeof settings === 'object' && settings !== null
        ? (settings as Record<string, unknown>).sd_model_checkpoint
        : undefined;
    return named === undefined || named === null ? options.checkpoint : checkpoints.find(named);
  }

  async function progressAnswer(caller: string, skipImage: boolean) {
    const snap = progress.snapshot(caller);
    const currentImage =
      !skipImage && snap?.preview
        ? (await encodeGenerated(snap.preview.data, snap.preview.width, snap.preview.height, 'png')).toString(
            'base64',
          )
        : null;
    return {
      progress: snap?.progress ?? 0,
      eta_relative: snap?.etaRelative ?? 0,
      state: {
        skipped: snap?.job.skipped ?? false,
        interrupted: snap?.job.interrupted ?? false,
        job: snap ? `generation ${snap.job.no + 1} out of ${snap.job.count}` : '',
        job_count: snap?.job.count ?? 0,
        job_timestamp: snap?.job.timestamp ?? '0',
        job_no: snap?.job.no ?? 0,
        sampling_step: snap?.job.step ?? 0,
        sampling_steps: snap?.job.steps ?? 0,
      },
      current_image: currentImage,
      textinfo: null,
      ignored_words: snap?.job.ignoredWords ?? [],
    };
  }

  async function generate(ctx: Ctx, img2img: boolean) {
    const body = await readJson(ctx, MAX_IMG2IMG_BYTES);
    const plan = a1111Plan(body, generator, img2img);
    const maxPixels = generator.maxSize * generator.maxSize;
    let image: UploadedImage | undefined;
    let mask: UploadedImage | undefined;
    if (img2img) {
      const inits = body.init_images;
      if (!Array.isArray(inits) || inits.length === 0)
        throw new UnprocessableEntity('init_images must be a list of one base64 image');
      image = await base64Image(inits[0], 'init_images[0]', maxPixels, ctx.state.signal);
      if (body.mask !== undefined && body.mask !== null && body.mask !== '')
        mask = await base64Image(body.mask, 'mask', maxPixels, ctx.state.signal);
      if (mask && (mask.width !== image.width || mask.height !== image.height))
        throw new BadInput(
          `mask is ${mask.width}×${mask.height} and init_images[0] ${image.width}×${image.height}: they must be the same size`,
        );
      // Fitted to the served size once for all its iterations, not by each: the decoded pixels move into the
      // resizing thread rather than being copied (a 4096² upload's 50 MB would hold the event loop).
      const { limits } = generator.context;
      const fit = { transfer: true, signal: ctx.state.signal };
      image = { ...(await rgbInput('init_images[0]', image, limits, fit)), channels: 3 };
      if (mask) mask = { ...(await rgbInput('mask', mask, limits, fit)), channels: 3 };
    }
    // This request's checkpoint: its `override_settings.sd_model_checkpoint`, else the global setting's.
    const checkpoint = await overridden(body.override_settings);
    // The kind's own queue (--concurrency, --queue), ordered by Priority, as its native API's calls are: the
    // request holds one slot for all its iterations.
    await ctx.state.queue(!image ? 'text2img' : mask ? 'inpaint' : 'img2img');
    const { job, end } = progress.begin(callerOf(ctx.req), plan.iterations, ctx.state.signal);
    // The prompt's words the model ignores (its `<lora:…>` tags removed): the native routes' header, and
    // `ignored_words` in `info` and in `/progress` while the job runs.
    job.ignoredWords = ignoredWords?.words({ prompt: String(plan.body.prompt ?? '') }) ?? [];
    const ignoredHeader = ignoredWordsHeader(job.ignoredWords);
    if (ignoredHeader !== undefined) ctx.set(IGNORED_WORDS_HEADER, ignoredHeader);
    // The model's hash is awaited only where an image is written: a first request does not wait on hashing.
    const hashed = servedModel(checkpoint.path);
    hashed.catch(() => {});
    const context = async () => ({ plan, model: await hashed, options });
    const images: string[] = [];
    const seeds: number[] = [];
    const infotexts: string[] = [];
    // The latest preview of the generation under way, which an interrupt answers as A1111 answers its partial image.
    let latest: { no: number; preview: JobImage } | undefined;
    try {
      for (let i = 0; i < plan.iterations; i++) {
        const signal = job.begin(i);
        const seeded = { ...plan.body, seed: plan.seed + i * plan.batchSize, model: checkpoint.name };
        let result: Awaited<ReturnType<Generator['start']>['result']>;
        try {
          const run = generator.start({
            request: await compatRequest(generator, seeded, { image, mask }, signal),
            signal,
            preview: true,
          });
          const stop = generator.events.subscribe((e) => {
            if (e.type !== 'step') return;
            job.stepped(e.step, e.totalSteps, e.preview?.image);
            if (e.preview) latest = { no: i, preview: e.preview.image };
          }, run.jobId);
          result = await run.result.finally(stop);
        } catch (err) {
          const stop = err instanceof GenerationCancelled ? job.stoppedBy() : undefined;
          // Interrupted: A1111 answers with the images made so far; skipped: it goes on with the next generation.
          if (stop === 'interrupted') {
            if (latest?.no === i) {
              const seed = plan.seed + i * plan.batchSize;
              const { width, height, data } = partialImage(latest.preview, plan, image, generator.maxSize);
              const made = await a1111Image(data, width, height, seed, await context());
              images.push(made.base64);
              infotexts.push(made.infotext);
              seeds.push(seed);
            }
            break;
          }
          if (stop === 'skipped') continue;
          throw err;
        }
        for (let k = 0; k < result.images.length; k++) {
          const [height, width] = result.images[k].shape;
          const made = await a1111Image(
            result.images[k].data as Uint8Array,
            width,
            height,
            result.seeds[k],
            await context(),
          );
          images.push(made.base64);
          infotexts.push(made.infotext);
          seeds.push(result.seeds[k]);
        }
      }
    } finally {
      end();
    }
    return {
      images,
      parameters: plan.parameters,
      info: JSON.stringify({
        ...info(plan, seeds, infotexts, await hashed),
        ignored_words: job.ignoredWords,
      }),
    };
  }
}

/** `info` as A1111 writes it: the generation's settings and every image's seed. */
function info(
  plan: A1111Plan,
  seeds: number[],
  infotexts: string[],
  model: ServedModel,
): Record<string, unknown> {
  const p = plan.parameters;
  return {
    prompt: p.prompt,
    all_prompts: seeds.map(() => p.prompt),
    negative_prompt: p.negative_prompt,
    all_negative_prompts: seeds.map(() => p.negative_prompt),
    seed: seeds[0] ?? plan.seed,
    all_seeds: seeds,
    subseed: -1,
    all_subseeds: seeds.map(() => -1),
    subseed_strength: 0,
    width: p.width,
    height: p.height,
    sampler_name: plan.samplerName,
    cfg_scale: p.cfg_scale,
    steps: p.steps,
    batch_size: plan.batchSize,
    restore_faces: false,
    sd_model_name: model.name,
    sd_model_hash: model.hash?.short ?? null,
    denoising_strength: p.denoising_strength ?? null,
    index_of_first_image: 0,
    infotexts,
    job_timestamp: new Date().toISOString().replace(/\D/g, '').slice(0, 14),
    clip_skip: 1,
    is_using_inpainting_conditioning: false,
    version: 'tiffin',
  };
}

async function readJson(ctx: Ctx, maxBytes: number): Promise<Record<string, unknown>> {
  const bytes = await ctx.state.body(maxBytes);
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new UnprocessableEntity('The body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UnprocessableEntity('The body must be a JSON object');
  return value as Record<string, unknown>;
}

/** A base64 image (with or without a `data:` prefix) decoded to pixels. */
async function base64Image(
  value: unknown,
  field: string,
  maxPixels: number,
  signal: AbortSignal,
): Promise<UploadedImage> {
  if (typeof value !== 'string') throw new UnprocessableEntity(`${field} must be a base64 string`);
  const comma = value.startsWith('data:') ? value.indexOf(',') : -1;
  const bytes = Buffer.from(value.slice(comma + 1), 'base64');
  try {
    return await decodeUpload(new Uint8Array(bytes), maxPixels, false, signal);
  } catch (err) {
    // Over the size bound: a size error (A1111's group answers it as a 422), never "not an image".
    if (err instanceof UnreadableImage && err.tooLarge)
      throw new BadInput(`${field} ${err.message}`, { code: 'IMAGE_TOO_LARGE' });
    if (err instanceof UnreadableImage) throw new UnprocessableEntity(`${field} ${err.message}`);
    throw err;
  }
}
