export { registerServe } from './commands/serve.js';
export { type CommandRegistration, createProgram } from './program.js';
export { loadService, parseServiceTarget, type ServiceTarget } from './service-loader.js';
