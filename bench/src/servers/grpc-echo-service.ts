/**
 * Child process: a 1k-float NumpyNdarray echo served over HTTP and gRPC by one runtime. Prints the HTTP URL on
 * the first stdout line; `POST /grpc_address` answers the gRPC address.
 */
import { type NDArray, NumpyNdarray, Service, serve, serveGrpc, Text } from '@tiffin/core';

const svc = new Service('bench_grpc');
svc.api(
  { input: new NumpyNdarray({ dtype: 'float64' }), output: new NumpyNdarray() },
  function echo(x: NDArray) {
    return x;
  },
);
svc.api({ input: new Text(), output: new Text() }, function grpc_address() {
  return rpc.address;
});
const http = await serve(svc, { port: 0, logger: false, maxConcurrency: 100_000, handleSignals: false });
const rpc = await serveGrpc(svc, {
  port: 0,
  runStartupHooks: false,
  log: () => undefined,
  runtime: http.app.runtime,
});
process.stdout.write(`${http.url}\n`);
process.on('SIGTERM', () => Promise.all([rpc.close(), http.close()]).then(() => process.exit(0)));
