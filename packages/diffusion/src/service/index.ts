export { assertBackendPackages, missingBackendPackages } from './backend-packages.js';
export * from './diffusion-service.js';
export { GenerationQueue, JobAbortedError, QueueFullError } from './generation-queue.js';
export { LoraPathError, LoraRoots } from './lora-roots.js';
export { defaultImageSize } from './model-config.js';
export { type ProgressEvent, ProgressHub } from './progress.js';
export * from './request-schemas.js';
export { type JobOutcome, type JobProgress, ModelWorkerHost } from './worker-host.js';
