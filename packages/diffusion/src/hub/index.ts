export * from './download.js';
export * from './select-files.js';
