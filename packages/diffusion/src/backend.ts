import type * as tf from '@tensorflow/tfjs';
import { MissingDependencyException } from '@tiffin/core/internal';
import { loadOrt } from '@tiffin/onnx';
import { BACKEND_NAMES, BACKEND_PREFERENCE, type BackendName } from './backend-names.js';
import { missingBackendError, WEBGPU_PACKAGES } from './backend-packages.js';

export { BACKEND_NAMES, BACKEND_PREFERENCE, type BackendName, WEBGPU_PACKAGES };

export interface BackendChoice {
  name: BackendName;
  /** tfjs backend id actually active (`tensorflow`, `wasm`, `cpu`); `none` on onnxruntime. */
  tfBackend: string;
  /** Why preferred backends were skipped. */
  skipped: { name: BackendName; reason: string }[];
}

/** The parts of the `webgpu` package (Dawn's Node bindings) used here. */
interface DawnAdapter {
  readonly limits: Readonly<Record<string, number>>;
  readonly info?: { readonly description?: string; readonly vendor?: string };
  requestDevice(descriptor?: object): Promise<unknown>;
}
interface DawnModule {
  create(flags: string[]): { requestAdapter(options?: object): Promise<DawnAdapter | null> };
  /** GPUBufferUsage, GPUMapMode, ...: tfjs-backend-webgpu reads them as globals. */
  globals: object;
}
interface TfWebGpuModule {
  WebGPUBackend: new (device: unknown, adapterInfo?: unknown) => tf.KernelBackend;
}

async function importOptional<T>(spec: string): Promise<T> {
  const name = spec.slice(0, spec.lastIndexOf('@'));
  try {
    const mod = (await import(name)) as T & { default?: T };
    // CommonJS bundles (tfjs-backend-webgpu) may expose their names only on `default`.
    return { ...mod.default, ...mod } as T;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw MissingDependencyException.forPackage(spec, 'the webgpu tfjs backend', e);
    throw e;
  }
}

let webgpuInfo = '';

/**
 * Registers tfjs's WebGPU backend on a Dawn adapter. `TIFFIN_WEBGPU_DAWN_FLAGS` passes Dawn
 * toggles (comma-separated, e.g. `backend=opengl`); a compatibility-mode adapter (Dawn's
 * OpenGL backend) is accepted when no core adapter exists.
 */
/** TF.js, imported only when a TF.js backend is chosen (a clear error names the package when it is missing). */
async function importTfjs(): Promise<typeof tf> {
  return importEngine('@tensorflow/tfjs', () => import('@tensorflow/tfjs'));
}

/** A TF.js engine package, or an error naming it when it is not installed. */
async function importEngine<T>(pkg: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND')
      throw MissingDependencyException.forPackage(pkg, 'the TF.js engine', e);
    throw e;
  }
}

async function initWebGpu(): Promise<string> {
  const tf = await importTfjs();
  const dawn = await importOptional<DawnModule>(WEBGPU_PACKAGES.dawn);
  const tfWebGpu = await importOptional<TfWebGpuModule>(WEBGPU_PACKAGES.tfjs);
  const flags = (process.env.TIFFIN_WEBGPU_DAWN_FLAGS ?? '')
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  const gpu = dawn.create(flags);
  const adapter =
    (await gpu.requestAdapter({ powerPreference: 'high-performance' })) ??
    (await gpu.requestAdapter({ featureLevel: 'compatibility' }));
  if (!adapter)
    throw new Error(
      `Dawn found no WebGPU adapter (flags: ${flags.join(',') || 'none'}); it needs a Vulkan driver, or ` +
        'TIFFIN_WEBGPU_DAWN_FLAGS=backend=opengl with EGL_PLATFORM=surfaceless for Mesa',
    );
  Object.assign(globalThis, dawn.globals);
  // tfjs-backend-webgpu checks `navigator.gpu` when a backend is made (Node 20 has no navigator).
  // Set after importing the package, so its own registration (core adapters only) stays off.
  const nav = (globalThis as { navigator?: { gpu?: unknown } }).navigator;
  if (!nav) Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true });
  else if (!nav.gpu) Object.defineProperty(nav, 'gpu', { value: gpu, configurable: true });
  if (!tf.findBackendFactory('webgpu')) {
    tf.registerBackend('webgpu', async () => {
      // The limits tfjs-backend-webgpu itself asks for: the adapter's maxima.
      const keys = [
        'maxComputeWorkgroupStorageSize',
        'maxComputeWorkgroupsPerDimension',
        'maxStorageBufferBindingSize',
        'maxBufferSize',
        'maxComputeWorkgroupSizeX',
        'maxComputeInvocationsPerWorkgroup',
      ];
      const requiredLimits = Object.fromEntries(keys.map((k) => [k, adapter.limits[k]]));
      const device = await adapter.requestDevice({ requiredLimits });
      return new tfWebGpu.WebGPUBackend(device, adapter.info);
    });
  }
  if (!(await tf.setBackend('webgpu'))) throw new Error('webgpu backend did not initialise');
  webgpuInfo = adapter.info?.description || adapter.info?.vendor || 'unknown adapter';
  return 'webgpu';
}

async function tryBackend(name: BackendName): Promise<string> {
  if (name === 'onnxruntime') {
    await loadOrt();
    return 'none';
  }
  // TF.js and its backends are optional peers: a missing one is named with its install command, before importing.
  const missing = missingBackendError(name);
  if (missing) throw missing;
  const tf = await importTfjs();
  switch (name) {
    case 'tensorflow-gpu': {
      const { assertNativeAddon } = await importEngine('@tiffin/tfjs', () => import('@tiffin/tfjs'));
      // Native addons are optional dependencies whose binaries are often absent: load lazily.
      assertNativeAddon('@tensorflow/tfjs-node-gpu', import.meta.url);
      await import('@tensorflow/tfjs-node-gpu' as string);
      if (!(await tf.setBackend('tensorflow'))) throw new Error('tensorflow backend did not initialise');
      return 'tensorflow';
    }
    case 'tensorflow': {
      const { assertNativeAddon } = await importEngine('@tiffin/tfjs', () => import('@tiffin/tfjs'));
      assertNativeAddon('@tensorflow/tfjs-node', import.meta.url);
      await import('@tensorflow/tfjs-node' as string);
      if (!(await tf.setBackend('tensorflow'))) throw new Error('tensorflow backend did not initialise');
      return 'tensorflow';
    }
    case 'webgpu':
      return initWebGpu();
    case 'wasm':
      await importEngine('@tensorflow/tfjs-backend-wasm', () => import('@tensorflow/tfjs-backend-wasm'));
      if (!(await tf.setBackend('wasm'))) throw new Error('wasm backend did not initialise');
      return 'wasm';
    case 'cpu':
      if (!(await tf.setBackend('cpu'))) throw new Error('cpu backend did not initialise');
      return 'cpu';
  }
}

let current: Promise<BackendChoice> | null = null;
let currentRequest: string | undefined;

/**
 * Select the tfjs backend: `requested` (or env TIFFIN_TF_BACKEND) forces one (including
 * `webgpu`); otherwise the first of tfjs-node-gpu, tfjs-node, wasm, cpu that loads. tfjs has one
 * global backend per process, so the choice is made once and later calls with the same request
 * reuse it.
 */
export function selectBackend(
  requested: BackendName | undefined = process.env.TIFFIN_TF_BACKEND as BackendName | undefined,
  log: (msg: string) => void = (m) => console.info(m),
): Promise<BackendChoice> {
  if (requested !== undefined && !BACKEND_NAMES.includes(requested)) {
    return Promise.reject(
      new Error(`unknown tfjs backend "${requested}" (use one of ${BACKEND_NAMES.join(', ')})`),
    );
  }
  if (current && currentRequest === requested) return current;
  currentRequest = requested;
  current = (async () => {
    const order = requested ? [requested] : BACKEND_PREFERENCE;
    const skipped: BackendChoice['skipped'] = [];
    for (const name of order) {
      try {
        const tfBackend = await tryBackend(name);
        const adapter = name === 'webgpu' ? ` (${webgpuInfo})` : '';
        // Say why faster backends were passed over: the usual question when a server runs on wasm.
        const passed = skipped.length
          ? `; skipped ${skipped.map((s) => `${s.name}: ${s.reason}`).join('; ')}`
          : '';
        log(`@tiffin/diffusion: using backend ${name}${adapter}${passed}`);
        return { name, tfBackend, skipped };
      } catch (e) {
        // A forced backend whose packages are missing: its own one-line error (with the install command) is the answer.
        if (requested && e instanceof MissingDependencyException) {
          current = null;
          throw e;
        }
        skipped.push({ name, reason: (e as Error).message.split('\n')[0] });
      }
    }
    current = null;
    throw new Error(
      `no tfjs backend could be loaded: ${skipped.map((s) => `${s.name}: ${s.reason}`).join('; ')}`,
    );
  })();
  return current;
}
