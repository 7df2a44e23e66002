import type { ModelRunner } from '@tiffin/core/internal';
import { selectTfjsBackend, type TfjsBackendName } from './backend.js';
import { readModelFolder } from './model-folder.js';
import { openTfjsModel } from './tfjs-model.js';

/** What one runner instance needs (structured-cloneable: it crosses into a worker thread). */
export interface TfjsRunnerInit {
  /** Absolute path of model.json. */
  path: string;
  /** Backends to try in order. */
  backends: TfjsBackendName[];
  threads: number | undefined;
}

/** One thread's model: its own backend choice and weights, named NDArrays in and out. */
export async function openRunner(init: TfjsRunnerInit): Promise<ModelRunner> {
  await selectTfjsBackend(init.backends, init.threads);
  return openTfjsModel(await readModelFolder(init.path));
}
