import { InvalidArgument } from '@tiffin/core';
import type { DescriptorSpec } from '@tiffin/core/descriptor';

/** docs/spec/io-descriptors.md §1.1: a pandas descriptor's `fromSpec` needs an `args` object, read as its options. */
export function specArgs<Options>(spec: DescriptorSpec, className: string): Options {
  if (!spec.args) throw new InvalidArgument(`Missing args key in ${className} spec: ${JSON.stringify(spec)}`);
  return spec.args as Options;
}
