// @tiffin/tfjs: TensorFlow.js LayersModel and GraphModel folders in the Tiffin model store, served off the event loop.
export {
  selectTfjsBackend,
  TFJS_BACKENDS,
  type TfjsBackendChoice,
  type TfjsBackendName,
} from './backend.js';
export { framework } from './framework.js';
export { inspectTfjs, type TfjsInspection } from './inspect.js';
export { type LoadTfjsModelOptions, loadModel, type TfjsModel } from './load-model.js';
export { readModelFolder, type TfjsModelFiles, type TfjsModelKind } from './model-folder.js';
export { isTfjsPath } from './model-path.js';
export { type SavableTfjsModel, writeModelFolder } from './model-writer.js';
export { assertNativeAddon, nativeAddonProblem } from './native-addon.js';
export { MODULE, saveModel } from './save-model.js';
