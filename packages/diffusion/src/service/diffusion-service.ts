import { basename, dirname, resolve } from 'node:path';
import {
  BadInput,
  JSONDescriptor,
  JsonLineLogger,
  Service,
  ServiceUnavailable,
  type TaskStore,
  Text,
} from '@tiffin/core';
import { jsonModel } from '@tiffin/io-json';
import { z } from 'zod';
import {
  type ModelDefaults,
  mergeDefaults,
  readLoraDefaults,
  readModelDefaults,
} from '../pipeline/model-defaults.js';
import { CheckpointCatalog, startCheckpoint } from './checkpoint-catalog.js';
import { a1111ControlNetRoutes } from './compat/a1111/a1111-controlnet.js';
import { a1111Routes } from './compat/a1111/a1111-routes.js';
import { openAIRoutes } from './compat/openai/openai-routes.js';
import { generationCache, generationVersion } from './generation-cache.js';
import { logGenerations } from './generation-log.js';
import { generationPage } from './generation-page.js';
import type { GenerationQueue } from './generation-queue.js';
import { Generator } from './generator.js';
import { IgnoredWordsReport } from './ignored-words-report.js';
import { GeneratedImagesOutput } from './images-output.js';
import { GENERATION_KINDS, type KindContext } from './kinds/index.js';
import { defaultImageSize, pipelineFamily } from './model-config.js';
import { negotiateOutputFormat } from './output-format.js';
import { ProgressHub, progressStream } from './progress.js';
import { QueryInput } from './query-input.js';
import { DEFAULT_GENERATION_LIMITS, defaultedValues, progressSchema } from './request-schemas.js';
import { servedKinds } from './served-kinds.js';
import type { DiffusionServiceOptions } from './service-options.js';

export type { DiffusionPipelineKind, DiffusionServiceOptions } from './service-options.js';

/** The largest side a request may ask for unless configured: the model's own size times this. */
export const MODEL_SIZE_FACTOR = 2;

/** What the factory returns: the Service plus handles tests and embedders use. */
export interface DiffusionService {
  service: Service;
  /** The generation path: worker, queue, LoRA folders and the one stream of progress events. */
  generator: Generator;
  /** `/progress`'s hub, fed by the generator's events. */
  progress: ProgressHub;
  queue: GenerationQueue;
  /** The service's task store (`/<api>/submit` and friends, served by core). */
  jobs: TaskStore;
}

/**
 * A Stable Diffusion service: the wiring of its `Generator` (one model worker thread that owns the pipeline, so
 * health checks and metrics answer while an image is generated; a bounded queue in front of it; per-request LoRA
 * files from allowed folders only; one stream of progress events) to the native APIs and their tasks, the page,
 * the log, `POST /progress` (server-sent events) and the OpenAI and A1111 layers.
 */
export function createDiffusionService(options: DiffusionServiceOptions): DiffusionService {
  const modelDir = resolve(options.modelDir);
  const kinds = servedKinds(modelDir, options.pipeline);
  const baseLora = options.loraWeights ? resolve(options.loraWeights) : undefined;
  // The model's own defaults, then those of the LoRA merged at start (an LCM-LoRA: lcm, 4 steps, no guidance).
  const defaults: ModelDefaults = mergeDefaults(
    readModelDefaults(modelDir),
    baseLora ? readLoraDefaults(baseLora) : undefined,
  );
  const family = pipelineFamily(modelDir);
  const modelSize = Math.max(defaultImageSize(modelDir), defaults.height ?? 0, defaults.width ?? 0);
  const limits = {
    ...DEFAULT_GENERATION_LIMITS,
    // Sizes far beyond what the model was trained for cost quadratic time and memory for no picture.
    maxSize: modelSize * MODEL_SIZE_FACTOR,
    // A bound given as undefined (a CLI flag left out) keeps the default.
    ...Object.fromEntries(Object.entries(options.limits ?? {}).filter(([, v]) => v !== undefined)),
  };
  const defaulted = defaultedValues(limits, family, defaults);
  const controlnets = Object.fromEntries(
    Object.entries(options.controlnets ?? {}).map(([name, folder]) => [name, resolve(folder)]),
  );
  const context: KindContext = {
    limits,
    defaultSize: defaultImageSize(modelDir),
    family,
    defaults,
    defaulted,
    controlnets: Object.keys(controlnets),
  };
  const logger = options.logger ?? new JsonLineLogger((line) => process.stderr.write(line));
  const generator = new Generator({
    kinds,
    context,
    modelName: basename(modelDir),
    worker: {
      modelDir,
      backend: options.backend,
      onnx: options.onnx,
      vaeTiny: options.vaeTiny ? resolve(options.vaeTiny) : undefined,
      baseLoraPath: baseLora,
      loraCacheSize: options.loraCacheSize ?? 4,
      loraCacheBytes: options.loraCacheBytes ?? 512 * 1024 ** 2,
      controlnets,
    },
    catalog: new CheckpointCatalog(
      startCheckpoint(modelDir),
      options.modelsDir === undefined ? undefined : resolve(options.modelsDir),
    ),
    maxLoadedModels: options.maxLoadedModels,
    loraDirs: [options.loraDir, baseLora && dirname(baseLora), process.env.TIFFIN_LORA_DIR],
    maxQueue: options.maxQueue ?? 4,
  });
  const service = new Service(options.name ?? 'stable-diffusion', {
    doc: `Stable Diffusion (${kinds.map((k) => GENERATION_KINDS[k].title).join(', ')}) from ${basename(modelDir)}.`,
    models: options.models,
    // One task at a time: the model worker runs one generation at a time anyway.
    tasks: { maxTasks: options.maxJobs ?? 64, resultTtl: options.jobResultTtl ?? 600 },
  });

  // The generator's one event stream: the log (and the count of generations cancelled, by reason) and /progress.
  logGenerations(
    generator.events,
    logger,
    service.counter(
      'generations_cancelled_total',
      'Generations cancelled before they finished, by reason (timeout, client_gone, cancelled)',
      ['reason'],
    ),
  );
  const progress = new ProgressHub();
  progress.follow(generator.events);

  // Public: the page itself holds nothing; the API calls it makes need the token like any other client's.
  if (options.page !== false) service.mount(generationPage(), { public: true });

  service.onStartup(() => generator.open(logger));
  const ignoredWords = new IgnoredWordsReport(modelDir);
  service.onStartup(() => ignoredWords.load(logger));
  service.onShutdown(() => generator.close());
  // A worker that died takes the model with it: /readyz says so, so an orchestrator stops routing here.
  service.addReadinessCheck(() => generator.failureReason ?? true);

  /**
   * Each served kind's synchronous API (`/<name>`: the images in the response), also served as a task by core
   * (`task: true`): `/<name>/submit` → `{id}`, `/<name>/status?id=`, `/<name>/get?id=`, `/<name>/cancel?id=`
   * and `/<name>/events?id=` (server-sent progress, with previews when submitted with `?preview=true`).
   */
  const output = new GeneratedImagesOutput();
  const timeout = options.timeout ?? 600;
  const admission =
    options.concurrency === undefined ? {} : { concurrency: options.concurrency, queue: options.queue ?? 0 };
  // Seeded requests' answers, kept by every parameter, Accept and the model's files (docs/diffusion-service.md).
  const cache = generationCache(
    options.cache,
    generationVersion({
      modelDir,
      loraWeights: baseLora,
      vaeTiny: options.vaeTiny && resolve(options.vaeTiny),
      engine: `${options.backend ?? process.env.TIFFIN_TF_BACKEND ?? ''} ${JSON.stringify(options.onnx ?? {})}`,
    }),
  );
  for (const name of kinds) {
    const kind = GENERATION_KINDS[name];
    service.api(
      {
        name,
        input: kind.input(context),
        output,
        timeout,
        doc: kind.doc,
        task: true,
        ...admission,
        ...(cache ? { cache } : {}),
      },
      async (value, ctx) => {
        const task = ctx.taskId !== undefined;
        const request = await kind.toRequest(value, context, ctx.request.signal);
        // The prompt's words the model cannot represent: a header now, and in every step event of a task.
        const ignored = ignoredWords.report(request.input.params, ctx);
        const named = ignored.length > 0 ? { ignored_words: ignored } : {};
        const { format, quality } = request.output;
        if (quality !== null && format === 'png')
          throw new BadInput('output_quality applies to jpeg and webp, not png (lossless)');
        // A format the client cannot take is a 406 now, before the generation's minutes.
        if (!task) negotiateOutputFormat(ctx.request.headers.get('accept'), format);
        const run = generator.start({
          request,
          // A task waited its turn in the task store: it is not queued behind requests a second time.
          origin: task ? 'task' : 'request',
          id: ctx.taskId ?? ctx.requestId,
          signal: ctx.request.signal,
          preview: task && ['1', 'true'].includes(ctx.request.query.get('preview') ?? ''),
        });
        // The task's steps and previews, as /<name>/events and /<name>/status report them.
        const stop = generator.events.subscribe((e) => {
          if (e.type !== 'step') return;
          const preview = e.preview ? { preview: e.preview.dataUrl } : {};
          ctx.progress(e.step, e.totalSteps, { timestep: e.timestep, ...preview, ...named });
        }, run.jobId);
        return run.result.finally(stop);
      },
    );
  }

  // The compatible APIs start their generations on the generator. Their routes' deadline is the service's
  // `timeout` when one was given (`tiffin diffusion start --timeout`), else the server's (`tiffin serve --timeout`).
  const compatMount = options.timeout === undefined ? {} : { timeout: options.timeout };
  // Route groups (docs/server.md, route groups): each in its API's error shape; A1111's opened by its `--api-auth`
  // users (Basic) as well as by the service's token.
  if (options.a1111Api !== false) {
    const auth = options.a1111ApiAuth?.length ? { basic: options.a1111ApiAuth } : 'bearer';
    service.group(a1111Routes(generator, { auth, ...compatMount }, ignoredWords));
    // The ControlNet extension's routes beside A1111's, under the same auth.
    service.group(a1111ControlNetRoutes(generator, { auth, ...compatMount }));
  }
  if (options.openaiApi !== false)
    for (const group of openAIRoutes({ generator, modelId: service.name, ...compatMount }))
      service.group(group);

  service.api(
    {
      name: 'defaults',
      input: new QueryInput(z.object({})),
      output: new JSONDescriptor(),
      doc: "GET: the generation defaults a request's left-out fields take (the model's own, from its tiffin_defaults.json and the LoRA merged at start), and the size limit.",
    },
    async () => ({
      ...defaulted,
      scheduler: generator.defaults.scheduler,
      scheduler_config: defaults.scheduler_config ?? {},
      negative_prompt: defaults.negative_prompt ?? null,
      ...(kinds.includes('text2img')
        ? { height: defaults.height ?? context.defaultSize, width: defaults.width ?? context.defaultSize }
        : {}),
      max_size: limits.maxSize,
    }),
  );

  service.api(
    {
      name: 'models',
      input: new QueryInput(z.object({})),
      output: new JSONDescriptor(),
      doc: "GET: the checkpoints a request may name in model (the start model first, the default; then --models-dir's), which are loaded, and the ControlNets a request may name in controlnet[].model.",
    },
    async () => {
      const { catalog, pipelines } = generator;
      catalog.refresh();
      const loaded = new Set(pipelines.loaded);
      return {
        default: catalog.start.name,
        max_loaded: pipelines.maxLoaded,
        models: catalog.list().map((c) => ({ name: c.name, loaded: loaded.has(c.path) })),
        // The names requests give in controlnet[].model, in the order they were loaded.
        controlnets: Object.keys(controlnets),
      };
    },
  );

  service.api(
    {
      name: 'loras',
      input: new QueryInput(z.object({})),
      output: new JSONDescriptor(),
      doc: 'GET: the LoRA files requests may name in lora_weights, with their sizes.',
    },
    async () => {
      const roots = generator.loraRoots;
      if (!roots) throw new ServiceUnavailable('The model is still loading; try again shortly');
      return { loras: await roots.list() };
    },
  );

  service.api(
    {
      name: 'progress',
      input: jsonModel(progressSchema),
      output: new Text({ content_type: 'text/event-stream' }),
      // The schema's own example (request_id null) asks for every generation, which is off by default.
      example: { request_id: '754995ad325f8bda' }, // the form of an x-request-id
      doc: "Server-sent events of one generation (request_id: a request's x-request-id or a job id) until it finishes; every generation only when the server allows it (--progress-all).",
    },
    (body, ctx) => {
      // Every generation's id and previews are other clients' business: that stream is opt-in.
      if (body.request_id === null && !options.progressAll) {
        throw new BadInput(
          'request_id is required: /progress follows one generation (streaming every generation is off; start the server with --progress-all to allow it)',
        );
      }
      return progressStream(progress, ctx.request.signal, body.request_id ?? undefined);
    },
  );

  return {
    service,
    generator,
    progress,
    queue: generator.queue,
    // Read when asked: `tiffin serve` may give the service its --tasks store after it was made.
    get jobs(): TaskStore {
      return service.tasks;
    },
  };
}
