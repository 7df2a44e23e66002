export { DTypeConversionError, RaggedArrayError } from './convert.js';
export {
  canCastSameKind,
  DTYPES,
  type DType,
  type DTypeKind,
  type DTypeStorage,
  dtypeKind,
  type FloatDType,
  formatShape,
  type IntDType,
  integerRange,
  isDType,
  isFloatDType,
  isIntegerDType,
  itemSize,
  type NDArrayData,
  type NumericDType,
  normalizeDType,
  roundToFloat16,
  shapesMatch,
  type TypedArray,
} from './dtype.js';
export { ndarrayToJson } from './json.js';
export * from './ndarray.js';
export { type LabelScore, type TopKOptions, topK } from './top-k.js';
