export { registerServe } from './commands/serve.js';
export { type CommandRegistration, createProgram } from './program.js';
export { loadService, parseServiceTarget, type ServiceTarget } from './service-loader.js';
export { type StepProgress, stepProgress } from './step-progress.js';
