import { InvalidArgument } from '../../errors/index.js';
import type { DescriptorSpec } from '../openapi.js';

/** docs/spec/io-descriptors.md §1.1: every built-in `fromSpec` but Text's needs an `args` object. */
export function requireArgs(spec: DescriptorSpec, className: string): Record<string, unknown> {
  if (!spec || typeof spec !== 'object' || !spec.args || typeof spec.args !== 'object') {
    throw new InvalidArgument(`Missing args key in ${className} spec: ${JSON.stringify(spec)}`);
  }
  return spec.args;
}

/** Name of a value's type for messages (`string`, `Array`, `Buffer`, `null`). */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  return (value as object).constructor?.name ?? 'object';
}
