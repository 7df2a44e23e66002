/** Child process: a Tiffin service with a JSON echo API; prints its URL on the first stdout line. */
import { JSON as JSONDescriptor, Service, serve } from '@tiffin/core';

const svc = new Service('bench_echo');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(input) {
  return input;
});
// Logging off, no concurrency cap (the load generator decides the load): compared with a bare node:http handler.
const handle = await serve(svc, { port: 0, logger: false, maxConcurrency: 1_000_000, handleSignals: true });
process.stdout.write(`${handle.url}\n`);
