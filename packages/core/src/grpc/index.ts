export * from './messages.js';
export * from './proto.js';
export * from './server.js';
export { serviceMetadata } from './service-metadata.js';
export * from './struct.js';
