import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';

/**
 * The package layers: which workspace package may import which. A package may use only what is listed for it;
 * a package that is missing from this table fails the check, so a new package declares its place first.
 * Direction: core at the bottom, the optional extras (io-*) and model runtimes on it, the diffusion service on
 * those, the CLI on top. ARCHITECTURE.md draws the same picture.
 */
export const PACKAGE_LAYERS: Readonly<Record<string, readonly string[]>> = {
  '@tiffin/core': [],
  // Packaging (tiffin build, containerize, Kubernetes, the package store): only the CLI composes it.
  '@tiffin/build': ['@tiffin/core'],
  '@tiffin/client': ['@tiffin/core'],
  '@tiffin/io-json': ['@tiffin/core'],
  '@tiffin/io-pandas': ['@tiffin/core'],
  '@tiffin/io-image': ['@tiffin/core'],
  '@tiffin/onnx': ['@tiffin/core'],
  '@tiffin/tfjs': ['@tiffin/core'],
  // Task APIs on Redis through BullMQ: only the CLI composes it (`--tasks redis://…`), so core stays free of it.
  '@tiffin/tasks-redis': ['@tiffin/core'],
  // The OpenTelemetry SDK and OTLP exporters, configured by OTEL_* variables: the CLI loads it only when tracing.
  '@tiffin/otel': [],
  '@tiffin/diffusion': [
    '@tiffin/core',
    '@tiffin/io-image',
    '@tiffin/io-json',
    '@tiffin/onnx',
    '@tiffin/tfjs',
  ],
  '@tiffin/demo-model': ['@tiffin/diffusion'],
  '@tiffin/fuzz': ['@tiffin/core', '@tiffin/io-image', '@tiffin/io-pandas'],
  // @tiffin/onnx and @tiffin/tfjs are imported when a model of theirs is served (by the store's Module column).
  '@tiffin/cli': [
    '@tiffin/core',
    '@tiffin/build',
    '@tiffin/diffusion',
    '@tiffin/demo-model',
    '@tiffin/onnx',
    '@tiffin/otel',
    '@tiffin/tasks-redis',
    '@tiffin/tfjs',
  ],
};

/**
 * The folders inside @tiffin/core (`packages/core/src/<folder>/`), bottom up: which other folders each may
 * import. Every folder lists only folders above it in this table, so the folders form layers with no cycle
 * (`coreFolderCycles` checks that too, whatever the table says). A folder missing from the table fails the check.
 * `index.ts` and `internal.ts` at the root gather names from every folder. ARCHITECTURE.md draws the same layers.
 */
export const CORE_FOLDER_LAYERS: Readonly<Record<string, readonly string[]>> = {
  // The Logger contract and its implementations: the server, gRPC and the runtime log through it.
  logging: [],
  // The error catalog and the one error answer (status and JSON body) every transport gives.
  errors: ['logging'],
  limits: ['errors'],
  http: ['errors', 'limits'],
  // Bytes and JSON: strict UTF-8, the exact JSON parser, the compact writer, the encoder rules.
  encoding: ['errors', 'limits'],
  // OpenTelemetry spans and the per-call timeline (Server-Timing) over the OTel API alone: a no-op without an SDK.
  tracing: [],
  // The stores and worker threads stand apart: serving reads the model store, no server or packaging in them.
  store: ['errors'],
  tasks: ['errors'],
  threads: ['errors', 'tracing'],
  ndarray: ['encoding', 'errors'],
  // The pure wire forms, no transport: gRPC messages and Struct values, v2 tensors and datatypes.
  wire: ['encoding', 'errors', 'limits', 'ndarray'],
  // A model's signature and the checks of tensors against it (the Tensors descriptor and the runners use them).
  signature: ['errors', 'ndarray'],
  // The per-call Context an API function and a descriptor are given.
  context: ['http', 'tasks'],
  // The descriptors: every wire form of a value.
  io: ['context', 'encoding', 'errors', 'http', 'limits', 'ndarray', 'signature', 'threads', 'wire'],
  service: ['context', 'errors', 'io', 'tasks'],
  openapi: ['io', 'service'],
  models: [
    'context',
    'errors',
    'io',
    'ndarray',
    'service',
    'signature',
    'store',
    'threads',
    'tracing',
    'wire',
  ],
  // The one caller of API functions: invoke, gate, deadlines, batcher, the task runner.
  runtime: ['context', 'errors', 'http', 'io', 'limits', 'logging', 'service', 'tasks', 'tracing'],
  // The response cache in front of an API's function and HTTP codec: keys, stores, single flight.
  cache: ['context', 'errors', 'http', 'runtime', 'service'],
  // The transports on top: the v2 protocol's bodies and model metadata, HTTP (with the v2 routes), gRPC.
  'inference-protocol': ['encoding', 'errors', 'ndarray', 'runtime', 'service', 'wire'],
  server: [
    'cache',
    'context',
    'errors',
    'http',
    'inference-protocol',
    'io',
    'limits',
    'logging',
    'openapi',
    'runtime',
    'service',
    'tasks',
    'tracing',
    'wire',
  ],
  grpc: [
    'cache',
    'errors',
    'http',
    'inference-protocol',
    'io',
    'limits',
    'logging',
    'runtime',
    'server',
    'service',
    'tracing',
    'wire',
  ],
  // The contract suites a task store runs in its vitest tests (`@tiffin/core/testing`), the store alone and
  // behind a listening server: the one folder that imports vitest, reached from no other folder.
  testing: ['errors', 'io', 'logging', 'server', 'service', 'tasks'],
};

/**
 * The folders inside @tiffin/diffusion (`packages/diffusion/src/<folder>/`), bottom up, as CORE_FOLDER_LAYERS is
 * for core: each engine is its own folder (`engines/onnx`, `engines/tfjs`), `engines` alone is what both share,
 * and `.` is the root's own files other than the entries (the backend choice). The entries (index.ts, tfjs.ts,
 * testing.ts) gather every folder. `tiny/` (the test models) is in no folder's list: only testing.ts and the tests
 * reach it. ARCHITECTURE.md draws the same layers.
 */
export const DIFFUSION_FOLDER_LAYERS: Readonly<Record<string, readonly string[]>> = {
  // Which TF.js backend runs (names, optional packages, selection).
  '.': [],
  // Host float32 tensors and their maths; the one bridge to TF.js tensors.
  latents: [],
  // safetensors, the weight store, diffusers folders, weight declarations.
  weights: [],
  tokenizer: ['weights'],
  schedulers: ['latents'],
  // The operation interface the architectures are defined over, and the shape-only backend (DeclareOps).
  ops: ['weights'],
  // Each network defined once over `ops/ops.ts` (docs/spec/diffusion.md §5).
  architectures: ['ops', 'weights'],
  // The real model families' configs: what tiny/ shrinks and checkpoint conversion defaults to.
  families: ['architectures'],
  lora: ['latents', 'weights'],
  // Single-file LDM/SGM checkpoints converted to diffusers folders.
  checkpoints: ['architectures', 'families', 'weights'],
  // What both engines share: the models' contract as the pipeline calls them, the folder configs.
  engines: ['architectures', 'latents', 'lora', 'schedulers', 'tokenizer', 'weights'],
  // The two engines, each over its own implementation of the ops; neither imports the other.
  'engines/onnx': [
    'architectures',
    'engines',
    'latents',
    'lora',
    'ops',
    'schedulers',
    'tokenizer',
    'weights',
  ],
  'engines/tfjs': ['architectures', 'engines', 'latents', 'lora', 'ops', 'weights'],
  pipeline: [
    '.',
    'architectures',
    'checkpoints',
    'engines',
    'engines/onnx',
    'engines/tfjs',
    'latents',
    'lora',
    'schedulers',
    'tokenizer',
    'weights',
  ],
  hub: ['checkpoints', 'pipeline'],
  // The HTTP service and its compat layers; the ONNX engine's options are part of its own.
  service: ['.', 'engines/onnx', 'latents', 'lora', 'pipeline', 'schedulers', 'tokenizer', 'weights'],
  // The tiny test models, shrunk from the families' configs.
  tiny: ['architectures', 'families', 'tokenizer', 'weights'],
};

const DIFFUSION_ENTRIES = ['index', 'tfjs', 'testing'];

export const DIFFUSION_FOLDERS: FolderScheme = {
  pkg: '@tiffin/diffusion',
  table: 'DIFFUSION_FOLDER_LAYERS',
  folderOf: (file) => {
    const parts = file.split('/');
    if (parts.length === 1) return DIFFUSION_ENTRIES.includes(file.replace(/\.[^.]+$/, '')) ? null : '.';
    if (parts[0] === 'engines' && parts.length > 2) return `engines/${parts[1]}`;
    return parts[0] as string;
  },
};

/**
 * The transports and the runtime under them call descriptors through the `IODescriptor` contract
 * (`io/descriptor.ts`), never a descriptor class: no transport switches on which descriptor an API has.
 */
export const DESCRIPTOR_BLIND_FOLDERS: readonly string[] = [
  'grpc',
  'inference-protocol',
  'runtime',
  'server',
];

/** Files of `DESCRIPTOR_BLIND_FOLDERS` that import a file of `io/descriptors/`. */
export function descriptorImports(files: ReadonlyArray<{ file: string; source: string }>): LayerViolation[] {
  const out: LayerViolation[] = [];
  for (const { file, source } of files) {
    if (!DESCRIPTOR_BLIND_FOLDERS.includes(file.split('/')[0] as string)) continue;
    const code = source.replace(COMMENT, '$1');
    for (const m of code.matchAll(RELATIVE)) {
      const target = posix.normalize(posix.join(posix.dirname(file), (m[1] ?? m[2]) as string));
      if (target.startsWith('io/descriptors/')) out.push({ pkg: '@tiffin/core', file, imports: target });
    }
  }
  return out;
}

const RELATIVE =
  /^\s*(?:import|export)\b[^;'"]*?(?:from\s*)?['"](\.{1,2}\/[^'"]+)['"]|\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]/gm;

/**
 * How a package's files fall into folders for a folder-layer table: `folderOf` names the folder of a file (a path
 * relative to the package's src), or null for an entry that gathers every folder and is not checked.
 */
export interface FolderScheme {
  pkg: string;
  /** The table's name, for the message of a folder it does not list. */
  table: string;
  folderOf(file: string): string | null;
}

export const CORE_FOLDERS: FolderScheme = {
  pkg: '@tiffin/core',
  table: 'CORE_FOLDER_LAYERS',
  folderOf: (file) => (file.includes('/') ? (file.split('/')[0] as string) : null),
};

/** The folders that `file` imports by relative path, not its own; an entry imported from a folder is its file name. */
export function folderImports(scheme: FolderScheme, file: string, source: string): string[] {
  const own = scheme.folderOf(file);
  const code = source.replace(COMMENT, '$1');
  return [...code.matchAll(RELATIVE)]
    .map((m) => {
      const target = posix.normalize(posix.join(posix.dirname(file), (m[1] ?? m[2]) as string));
      return scheme.folderOf(target) ?? target;
    })
    .filter((folder) => folder !== own);
}

/** The core folders that `file` (a path relative to `packages/core/src`) imports by relative path, not its own. */
export function coreFolderImports(file: string, source: string): string[] {
  return folderImports(CORE_FOLDERS, file, source);
}

/** Imports between a package's folders that its table does not allow; files are relative to the package's src. */
export function folderViolations(
  scheme: FolderScheme,
  files: ReadonlyArray<{ file: string; source: string }>,
  layers: Readonly<Record<string, readonly string[]>>,
): LayerViolation[] {
  const out: LayerViolation[] = [];
  for (const { file, source } of files) {
    const folder = scheme.folderOf(file);
    if (folder === null) continue; // the entries gather every folder
    const allowed = layers[folder];
    if (!allowed) {
      out.push({ pkg: scheme.pkg, file, imports: `(folder ${folder}/ has no layer in ${scheme.table})` });
      continue;
    }
    for (const target of folderImports(scheme, file, source)) {
      if (!allowed.includes(target)) out.push({ pkg: scheme.pkg, file, imports: `${target}/` });
    }
  }
  return out;
}

/** Imports between core's folders that CORE_FOLDER_LAYERS does not allow; files are relative to core's src. */
export function coreFolderViolations(
  files: ReadonlyArray<{ file: string; source: string }>,
  layers: Readonly<Record<string, readonly string[]>> = CORE_FOLDER_LAYERS,
): LayerViolation[] {
  return folderViolations(CORE_FOLDERS, files, layers);
}

/**
 * The cycles among a package's folders: the folder graph of what the files import (not of what the table allows),
 * each cycle as the folders on it, the first repeated at the end (`['io', 'grpc', 'io']`). Folders in a cycle cannot
 * be drawn as layers, whatever the table says, so the check fails on any.
 */
export function folderCycles(
  scheme: FolderScheme,
  files: ReadonlyArray<{ file: string; source: string }>,
): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const { file, source } of files) {
    const from = scheme.folderOf(file);
    if (from === null) continue;
    const targets = edges.get(from) ?? new Set<string>();
    for (const target of folderImports(scheme, file, source)) targets.add(target);
    edges.set(from, targets);
  }
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const path: string[] = [];
  const visit = (folder: string): void => {
    const at = path.indexOf(folder);
    if (at >= 0) {
      cycles.push([...path.slice(at), folder]);
      return;
    }
    if (seen.has(folder)) return;
    path.push(folder);
    for (const next of [...(edges.get(folder) ?? [])].sort()) visit(next);
    path.pop();
    seen.add(folder);
  };
  for (const folder of [...edges.keys()].sort()) visit(folder);
  return cycles;
}

/** The cycles among core's folders (see folderCycles). */
export function coreFolderCycles(files: ReadonlyArray<{ file: string; source: string }>): string[][] {
  return folderCycles(CORE_FOLDERS, files);
}

/** Every source file under packages/<dir>/src, with its path relative to that folder. */
export function packageSources(root: string, dir: string): Array<{ file: string; source: string }> {
  const src = join(root, 'packages', dir, 'src');
  return sourceFiles(src).map((file) => ({
    file: relative(src, file).split('\\').join('/'),
    source: readFileSync(file, 'utf8'),
  }));
}

/** Every source file under packages/core/src, with its path relative to that folder. */
export function coreSources(root: string): Array<{ file: string; source: string }> {
  return packageSources(root, 'core');
}

export interface LayerViolation {
  pkg: string;
  file: string;
  imports: string;
}

const SPECIFIER = `['"](@tiffin\\/[^/'"]+)(?:\\/[^'"]*)?['"]`;
/** Static imports and re-exports start a line; dynamic import() and require() may stand anywhere. */
const IMPORT = new RegExp(
  `^\\s*(?:import|export)\\b[^;'"]*?(?:from\\s*)?${SPECIFIER}|\\b(?:import|require)\\s*\\(\\s*${SPECIFIER}`,
  'gm',
);
const COMMENT = /\/\*[\s\S]*?\*\/|(^|[^:])\/\/.*$/gm;

/** The workspace packages that `source` imports or requires (a subpath counts as its package); comments ignored. */
export function tiffinImports(source: string): string[] {
  const code = source.replace(COMMENT, '$1');
  return [...code.matchAll(IMPORT)].map((m) => (m[1] ?? m[2]) as string);
}

/** Imports of `pkg` that its layer does not allow; an unknown package is itself a violation. */
export function layerViolations(
  pkg: string,
  files: ReadonlyArray<{ file: string; source: string }>,
  layers: Readonly<Record<string, readonly string[]>> = PACKAGE_LAYERS,
): LayerViolation[] {
  const allowed = layers[pkg];
  if (!allowed) return [{ pkg, file: 'package.json', imports: '(package has no layer in PACKAGE_LAYERS)' }];
  const out: LayerViolation[] = [];
  for (const { file, source } of files) {
    for (const target of tiffinImports(source)) {
      if (target !== pkg && !allowed.includes(target)) out.push({ pkg, file, imports: target });
    }
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(c|m)?tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Every package under packages/ with its src files (and its package.json dependencies as one pseudo-file). */
export function workspaceSources(
  root: string,
): Array<{ pkg: string; files: Array<{ file: string; source: string }> }> {
  const dir = join(root, 'packages');
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const pkgDir = join(dir, entry.name);
      const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
        name: string;
        dependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
        optionalDependencies?: Record<string, string>;
      };
      const declared = Object.keys({
        ...manifest.dependencies,
        ...manifest.peerDependencies,
        ...manifest.optionalDependencies,
      })
        .filter((name) => name.startsWith('@tiffin/'))
        .map((name) => `import '${name}';`)
        .join('\n');
      const files = sourceFiles(join(pkgDir, 'src')).map((file) => ({
        file: relative(root, file),
        source: readFileSync(file, 'utf8'),
      }));
      return {
        pkg: manifest.name,
        files: [{ file: relative(root, join(pkgDir, 'package.json')), source: declared }, ...files],
      };
    });
}
