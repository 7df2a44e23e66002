import { BadInput } from '../errors/index.js';
import { DTypeConversionError } from '../ndarray/convert.js';
import { dtypeKind } from '../ndarray/dtype.js';
import { NDArray } from '../ndarray/ndarray.js';
import type { TensorSpec } from './signature.js';

/**
 * A model input from its JSON value (nested lists), for a check against its spec (`checkTensor`). A float
 * input reads the numbers as its dtype directly (anything else by inference, for the check to refuse). Any other input reads them by inference first, so a float
 * literal (`1.5`, `2.0`) stays a float and is refused for an integer input (`TENSOR_DTYPE_MISMATCH`) instead of
 * being cut to an integer; integers are then read as the input's dtype, range-checked (300 is no uint8).
 */
export function tensorFromJson(value: unknown, spec: TensorSpec | undefined): NDArray {
  if (spec && dtypeKind(spec.dtype) === 'f') {
    try {
      return NDArray.from(value, spec.dtype);
    } catch (err) {
      // Text or other values no float takes: inferred, so the check names the dtype that was sent.
      if (!(err instanceof DTypeConversionError)) throw err;
    }
  }
  const inferred = NDArray.from(value);
  if (!spec || inferred.dtype === spec.dtype) return inferred;
  const from = dtypeKind(inferred.dtype);
  const to = dtypeKind(spec.dtype);
  if ((from !== 'i' && from !== 'u') || (to !== 'i' && to !== 'u')) return inferred;
  try {
    return NDArray.from(value, spec.dtype);
  } catch (err) {
    if (!(err instanceof DTypeConversionError)) throw err;
    throw new BadInput(`Input '${spec.name}' takes ${spec.dtype}: ${err.message}`, {
      code: 'TENSOR_DTYPE_MISMATCH',
    });
  }
}
