import type { ModelSignature, SignatureOverrides } from '../signature/signature.js';
import type { ModelStore } from '../store/model-store.js';
import type { LoadedModel } from './runner.js';

/** Options of every framework module's `saveModel(name, source, options)`. */
export interface SaveFrameworkModelOptions {
  /** Corrections to the signature read from the model (names, dtypes, shapes, batchability). */
  signatures?: SignatureOverrides;
  /** Store labels (key → value), as `tiffin models list` shows them. */
  labels?: Record<string, string>;
  /** Class names in output order, for top-k labels. */
  classes?: readonly string[];
  /** Free-form user metadata kept with the model. */
  metadata?: Record<string, unknown>;
  /** The store to save into (default: `$TIFFIN_HOME/models`). */
  store?: ModelStore;
}

/** Options of every framework module's `loadModel(tagOrPath, options)`. */
export interface LoadFrameworkModelOptions {
  /**
   * Runner instances (worker threads) that may run at once; default one per core, at most 4. `0` runs the model
   * on the event loop, with no thread hop: only for models whose call takes well under a millisecond (the hop
   * costs tens of microseconds), since the server reads no request and answers no health check while it runs.
   */
  instances?: number;
  /** Threads each instance's runtime may use inside one call (intra-op); default: cores / instances. */
  threads?: number;
  /** Runtime back ends in order of preference, e.g. `['cuda', 'cpu']` (framework-specific names). */
  executionProviders?: readonly string[];
  /**
   * Move input buffers to the runner threads instead of copying them (default false). Saves a copy of large
   * inputs; the caller's typed arrays that own their buffer are detached by `run`, so only for inputs used once.
   */
  transferInputs?: boolean;
  /**
   * Read a model file's signature in a short-lived worker thread instead of on the calling one (default false):
   * a runtime that opens the file synchronously then never stalls the event loop. A model repository loading
   * models while others serve sets it (docs/model-repository.md).
   */
  inspectOffThread?: boolean;
  /** Override the stored (or inferred) signature at load time. */
  signatures?: SignatureOverrides;
  /** The store to load from (default: `$TIFFIN_HOME/models`). */
  store?: ModelStore;
}

/**
 * What a framework module keeps in the model manifest's `metadata` (the store's `module` column is the
 * framework's name): where the model lies in the entry's files, the signature, class labels, and the user's
 * own metadata under `user`.
 */
export interface FrameworkModelMetadata {
  /** Path of the model file or folder inside the entry's files (`model.onnx`, `model.json`). */
  readonly file: string;
  readonly signature: ModelSignature;
  readonly classes?: readonly string[];
  readonly user?: Record<string, unknown>;
}

/**
 * A framework module (`@tiffin/onnx` exports `framework`, `@tiffin/tfjs` likewise): what zero-code serving,
 * `tiffin models import` and `tiffin build` need to know about a model format.
 */
export interface FrameworkModule {
  /** The store's Module column for this framework (`onnx`, `tfjs`). */
  readonly module: string;
  /** Whether a file or folder is a model this module loads (by name and a quick look inside). */
  recognizes(path: string): Promise<boolean>;
  /** Save a model file or folder into the store; returns the `name:version` tag. */
  saveModel(name: string, source: string, options?: SaveFrameworkModelOptions): Promise<string>;
  /** Load a store tag (`name:latest`) or a model file/folder on disk. */
  loadModel(tagOrPath: string, options?: LoadFrameworkModelOptions): Promise<LoadedModel>;
}
