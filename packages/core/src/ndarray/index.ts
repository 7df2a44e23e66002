export { DTypeConversionError, RaggedArrayError } from './convert.js';
export * from './dtype.js';
export { ndarrayToJson } from './json.js';
export * from './ndarray.js';
export { formatPyFloat } from './text.js';
