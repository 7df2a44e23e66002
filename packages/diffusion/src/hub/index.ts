export * from './download.js';
export * from './select-files.js';
export * from './model-source.js';
