import type { NDArray } from '../ndarray/ndarray.js';

/** Tensors by name: a model call's inputs, or its outputs. */
export type NamedTensors = Record<string, NDArray>;
