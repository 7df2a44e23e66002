export * from './build-package.js';
export { packageNameOf } from './bundle.js';
export * from './containerize.js';
export { CONTAINER_PORT, CONTAINER_USER, DEFAULT_BASE_IMAGE, npmVersion } from './runtime-files.js';
export * from './service-reference.js';
