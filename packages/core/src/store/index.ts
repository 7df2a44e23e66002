export * from './contained-path.js';
export * from './entry-store.js';
export * from './errors.js';
export { contentVersion, type FileRecord, humanSize, listFiles, totalSize } from './files.js';
export * from './home.js';
export {
  type BaseManifest,
  type FieldReader,
  MANIFEST_FILE,
  readBaseFields,
  readManifest,
  writeManifest,
} from './manifest.js';
export * from './model-store.js';
export * from './tag.js';
