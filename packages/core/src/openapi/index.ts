export { buildOpenApiDocument, type OpenApiDocument } from './document.js';
