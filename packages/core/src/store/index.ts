export * from './entry-store.js';
export * from './errors.js';
export { type FileRecord, humanSize } from './files.js';
export * from './home.js';
export { type BaseManifest, MANIFEST_FILE } from './manifest.js';
export * from './model-store.js';
export * from './package-store.js';
export * from './serve-target.js';
export * from './tag.js';
