import type { FrameworkModule } from '@tiffin/core/internal';
import { loadModel } from './load-model.js';
import { isTfjsPath } from './model-path.js';
import { MODULE, saveModel } from './save-model.js';

/** @tiffin/tfjs as a framework module: what `tiffin serve <model folder>` and `tiffin models import` use. */
export const framework: FrameworkModule = {
  module: MODULE,
  recognizes: isTfjsPath,
  saveModel: (name, source, options) => saveModel(name, source, options),
  loadModel,
};
