import type { FrameworkModule } from '@tiffin/core/internal';
import { loadModel } from './load-model.js';
import { isOnnxPath } from './model-file.js';
import { MODULE, saveModel } from './save-model.js';

/** @tiffin/onnx as a framework module: what `tiffin serve model.onnx` and `tiffin models import` use. */
export const framework: FrameworkModule = {
  module: MODULE,
  recognizes: isOnnxPath,
  saveModel: (name, source, options) => saveModel(name, source, options),
  loadModel,
};
