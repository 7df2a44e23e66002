export { LoraCache, loraFileBytes } from './cache.js';
export { loraDelta } from './delta.js';
export { mergeLora } from './merge.js';
export { readLoraFile } from './parse.js';
export { resolveLoraPath } from './path.js';
export { kohyaKeyMap, resolveLora } from './resolve.js';
export { combineRuntimeLoras, prepareRuntimeLora, type RuntimeLora } from './runtime.js';
export * from './types.js';
