export * from './download.js';
export * from './model-source.js';
export * from './select-files.js';
