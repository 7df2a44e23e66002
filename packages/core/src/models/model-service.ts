import type { Context } from '../context/context.js';
import { InvalidArgument, ServiceUnavailable } from '../errors/index.js';
import type { IODescriptor } from '../io/descriptor.js';
import { Tensors } from '../io/descriptors/tensors.js';
import type { NDArray } from '../ndarray/ndarray.js';
import { type ApiOptions, Service } from '../service/service.js';
import type { NamedTensors } from '../signature/named-tensors.js';
import { describeTensor, type ModelSignature } from '../signature/signature.js';
import { ModelStore } from '../store/model-store.js';
import { readFrameworkMetadata } from './framework-store.js';
import { ModelTensors } from './model-tensors.js';
import type { LoadedModel, ModelRunner } from './runner.js';
import { defaultInstances } from './runner-pool.js';
import { SignatureNdarray } from './signature-ndarray.js';

export interface ModelServiceOptions {
  /** Service name (default: the model's name, lower-cased, other characters as `-`). */
  name?: string;
  /** Batching of a batchable signature; `false` turns it off. Defaults: 32 rows, 100 ms. */
  batching?: false | { max_batch_size?: number; max_latency_ms?: number };
  /** Description for the API page (default: the signature). */
  doc?: string;
  /**
   * The outputs to serve, by name, in this order (default: all of the model's). A model with many or large
   * outputs answers only these: the others are left out before anything is encoded. An unknown name is an error.
   */
  outputs?: readonly string[];
  /** Calls of the model that run at once, with a queue of their own (`ApiOptions.concurrency`; docs/server.md, queues). */
  concurrency?: number;
  /** Calls that may wait for one of them (`ApiOptions.queue`). */
  queue?: number;
  /**
   * Keep answers and send them again for the same input (`ApiOptions.cache`; docs/cache.md), keyed by the
   * model's tag (or its files, in a repository) besides the input. Not with batching: a batched model is
   * served with `batching: false` to be cached.
   */
  cache?: boolean | { ttl?: number; maxBytes?: number };
}

/** A name the service and API rules accept: `Iris v2` → service `iris-v2`, API (and protocol model) `iris_v2`. */
function serviceName(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '')
      .slice(0, 63) || 'model'
  );
}

function apiName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_]+/g, '_');
  return /^[A-Za-z_]/.test(cleaned) ? cleaned : `m_${cleaned}`;
}

/**
 * Zero code: a service that serves one model. `POST /predict` takes the model's input (one input: its nested
 * list, NumpyNdarray-style; several: a JSON object of named tensors) and answers with its output in the same
 * form; the Open Inference Protocol and gRPC serve it under the model's name. A batchable signature is served
 * with adaptive batching, one batch per idle runner instance.
 */
export function modelService(model: LoadedModel, options: ModelServiceOptions = {}): Service {
  return buildModelService(model, () => model, options).onShutdown(() => model.close());
}

/** What a service needs to know about a model before it runs: all of `LoadedModel` but the runner. */
export type ModelDescription = Omit<LoadedModel, 'run' | 'close'>;

export interface DeferredModelServiceOptions extends ModelServiceOptions {
  /** The stored model (`name:version`). */
  tag: string;
  /** Its framework module (`onnx`, `tfjs`): the store's Module column. */
  module: string;
  /** Starts the model's runners; called by the service's startup hook. */
  load: (tag: string) => Promise<LoadedModel>;
  /** Runner instances `load` starts (batches in flight at once); default `defaultInstances()`, as `loadModel`'s. */
  instances?: number;
  store?: ModelStore;
}

/**
 * The zero-code service of a stored model whose runners start with the server: the signature comes from the
 * store entry (nothing is loaded at import time), `load(tag)` runs in a startup hook and the model is closed at
 * shutdown. What `tiffin build model.onnx` packages.
 */
export async function deferredModelService(options: DeferredModelServiceOptions): Promise<Service> {
  const stored = await (options.store ?? new ModelStore()).get(options.tag);
  const meta = readFrameworkMetadata(stored, options.module);
  const description: ModelDescription = {
    name: stored.manifest.name,
    tag: stored.tag,
    module: options.module,
    signature: meta.signature,
    classes: meta.classes,
    metadata: meta.user ?? {},
    instances: options.instances ?? defaultInstances(),
  };
  let loaded: LoadedModel | undefined;
  const svc = buildModelService(
    description,
    () => {
      if (!loaded) throw new ServiceUnavailable(`Model '${description.name}' is not loaded yet`);
      return loaded;
    },
    options,
  );
  return svc
    .onStartup(async () => {
      loaded = await options.load(stored.tag);
    })
    .onShutdown(async () => {
      await loaded?.close();
    });
}

/** The model's signature with only the chosen outputs, in the order chosen; an unknown name is an error. */
function servedSignature(model: ModelDescription, outputs: readonly string[] | undefined): ModelSignature {
  const { signature } = model;
  if (!outputs) return signature;
  const chosen = outputs.map((name) => {
    const spec = signature.outputs.find((t) => t.name === name);
    if (!spec) {
      throw new InvalidArgument(
        `Model '${model.name}' has no output '${name}' (outputs: ${signature.outputs.map((t) => t.name).join(', ')})`,
      );
    }
    return spec;
  });
  if (new Set(outputs).size !== outputs.length)
    throw new InvalidArgument(`Model '${model.name}': an output is chosen twice (${outputs.join(', ')})`);
  return { ...signature, outputs: chosen };
}

/** The named tensors, in `names` order: the outputs the service answers with. */
function pick(tensors: NamedTensors, names: readonly string[]): NamedTensors {
  const out: NamedTensors = {};
  for (const name of names) out[name] = tensors[name]!;
  return out;
}

/** What serving one model takes: its API (route left to the caller), the function it calls and the service doc. */
function modelApiParts(
  model: ModelDescription,
  runner: () => ModelRunner,
  options: ModelServiceOptions,
  cacheVersion: string | (() => string) = model.tag ?? model.name,
) {
  const signature = servedSignature(model, options.outputs);
  if (signature.inputs.length === 0 || signature.outputs.length === 0)
    throw new InvalidArgument(`Model '${model.name}' has no inputs or no outputs to serve`);
  const single = signature.inputs.length === 1 && signature.outputs.length === 1;
  const input: IODescriptor = single
    ? new SignatureNdarray(model.name, signature.inputs[0]!, signature)
    : new ModelTensors(model.name, signature);
  const output: IODescriptor = single
    ? new SignatureNdarray(model.name, signature.outputs[0]!, null)
    : new Tensors({ model: model.name, tensors: signature.outputs });
  const inName = signature.inputs[0]!.name;
  const outName = signature.outputs[0]!.name;
  const outNames = signature.outputs.map((t) => t.name);
  const batching = signature.batchable && options.batching !== false ? (options.batching ?? {}) : null;
  if (batching && options.cache)
    throw new InvalidArgument(
      `Model '${model.name}' is batched and the response cache keeps single calls' answers: serve it without batching (--no-batching) to cache it`,
    );
  // A call alone carries its caller's signal, so a call whose client left or timed out never waits for a
  // runner; a batch is made of callers still there (the batcher drops the others) and serves several.
  const signalOf = (ctx: Context) => (batching ? undefined : ctx.request.signal);
  const call = single
    ? async (x: NDArray, ctx: Context) => (await runner().run({ [inName]: x }, signalOf(ctx)))[outName]!
    : options.outputs
      ? async (x: NamedTensors, ctx: Context) => pick(await runner().run(x, signalOf(ctx)), outNames)
      : (x: NamedTensors, ctx: Context) => runner().run(x, signalOf(ctx));
  const doc =
    options.doc ??
    `Model \`${model.tag ?? model.name}\` (${model.module}).\n\nInputs: ${signature.inputs.map(describeTensor).join('; ')}\n\nOutputs: ${signature.outputs.map(describeTensor).join('; ')}${batching ? `\n\nBatched along dimension ${signature.batch_dim}.` : ''}\n\nOpen Inference Protocol: model \`${model.name}\` at \`/v2/models/${encodeURIComponent(model.name)}\` (\`GET /v2/models\` lists the served models).`;
  const api: ApiOptions<IODescriptor, IODescriptor> = {
    name: apiName(model.name),
    // The Open Inference Protocol serves the model under its own name (`ch_PP-OCRv4_det_infer`, not the API's).
    protocolName: model.name,
    input,
    output,
    doc: `Run ${model.name}`,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.queue === undefined ? {} : { queue: options.queue }),
    ...(options.cache
      ? { cache: { ...(options.cache === true ? {} : options.cache), version: cacheVersion } }
      : {}),
  };
  if (batching) {
    Object.assign(api, {
      batchable: true,
      batch_dim: signature.batch_dim,
      max_batch_size: batching.max_batch_size,
      max_latency_ms: batching.max_latency_ms,
      maxConcurrentBatches: model.instances,
    });
  }
  return { api: api as ApiOptions<IODescriptor, IODescriptor> & { batchable?: false }, call, doc };
}

/**
 * One model's API on a service that serves several (a model repository): the zero-code API of `modelService`
 * at `route`, calling whatever runner `runner()` gives at call time (so a reloaded model serves the next call).
 */
export function addModelApi(
  svc: Service,
  model: ModelDescription,
  runner: () => ModelRunner,
  options: ModelServiceOptions & {
    route: string;
    /** What joins the cache's key besides the input (default the model's tag): its files, so a reload is new keys. */
    cacheVersion?: () => string;
  },
): void {
  const { api, call, doc } = modelApiParts(model, runner, options, options.cacheVersion);
  svc.api({ ...api, route: options.route, doc: options.doc ?? doc }, call as never);
}

function buildModelService(
  model: ModelDescription,
  runner: () => ModelRunner,
  options: ModelServiceOptions,
): Service {
  const { api, call, doc } = modelApiParts(model, runner, options);
  const svc = new Service(options.name ?? serviceName(model.name), {
    doc,
    models: model.tag ? [model.tag] : [],
  });
  svc.api({ ...api, route: '/predict' }, call as never);
  // No runner left is a model that cannot answer: not ready, so traffic goes elsewhere, while /livez stays up.
  svc.addReadinessCheck(() => {
    let runnerNow: ModelRunner;
    try {
      runnerNow = runner();
    } catch {
      return 'the model is not loaded yet';
    }
    return (runnerNow as Partial<LoadedModel>).health?.() ?? true;
  });
  return svc;
}
