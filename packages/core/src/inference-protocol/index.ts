export type { Datatype } from './datatype.js';
export { type InferenceProtocolDeps, registerInferenceProtocol } from './routes.js';
