/** The service file `tiffin serve` runs in the echo bench: one JSON → JSON echo API. */
import { JSON as JSONDescriptor, Service } from '@tiffin/core';

const svc = new Service('bench_echo');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(input) {
  return input;
});
export default svc;
