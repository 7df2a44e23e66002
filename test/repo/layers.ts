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
  // The stores and worker threads stand apart: serving reads the model store, no server or packaging in them.
  store: ['errors'],
  tasks: ['errors'],
  threads: ['errors'],
  // OpenTelemetry spans and the per-call timeline (Server-Timing) over the OTel API alone: a no-op without an SDK.
  tracing: [],
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
  models: ['context', 'errors', 'io', 'ndarray', 'service', 'signature', 'store', 'threads', 'wire'],
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

/** The core folders that `file` (a path relative to `packages/core/src`) imports by relative path, not its own. */
export function coreFolderImports(file: string, source: string): string[] {
  const own = file.split('/')[0];
  const code = source.replace(COMMENT, '$1');
  return [...code.matchAll(RELATIVE)]
    .map(
      (m) =>
        posix.normalize(posix.join(posix.dirname(file), (m[1] ?? m[2]) as string)).split('/')[0] as string,
    )
    .filter((folder) => folder !== own);
}

/** Imports between core's folders that CORE_FOLDER_LAYERS does not allow; files are relative to core's src. */
export function coreFolderViolations(
  files: ReadonlyArray<{ file: string; source: string }>,
  layers: Readonly<Record<string, readonly string[]>> = CORE_FOLDER_LAYERS,
): LayerViolation[] {
  const out: LayerViolation[] = [];
  for (const { file, source } of files) {
    if (!file.includes('/')) continue; // index.ts, internal.ts: the entries gather every folder
    const folder = file.split('/')[0] as string;
    const allowed = layers[folder];
    if (!allowed) {
      out.push({
        pkg: '@tiffin/core',
        file,
        imports: `(folder ${folder}/ has no layer in CORE_FOLDER_LAYERS)`,
      });
      continue;
    }
    for (const target of coreFolderImports(file, source)) {
      if (!allowed.includes(target)) out.push({ pkg: '@tiffin/core', file, imports: `${target}/` });
    }
  }
  return out;
}

/**
 * The cycles among core's folders: the folder graph of what the files import (not of what the table allows), each
 * cycle as the folders on it, the first repeated at the end (`['io', 'grpc', 'io']`). Folders in a cycle cannot be
 * drawn as layers, whatever the table says, so the check fails on any.
 */
export function coreFolderCycles(files: ReadonlyArray<{ file: string; source: string }>): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const { file, source } of files) {
    if (!file.includes('/')) continue;
    const from = file.split('/')[0] as string;
    const targets = edges.get(from) ?? new Set<string>();
    for (const target of coreFolderImports(file, source)) targets.add(target);
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

/** Every source file under packages/core/src, with its path relative to that folder. */
export function coreSources(root: string): Array<{ file: string; source: string }> {
  const src = join(root, 'packages', 'core', 'src');
  return sourceFiles(src).map((file) => ({
    file: relative(src, file).split('\\').join('/'),
    source: readFileSync(file, 'utf8'),
  }));
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
