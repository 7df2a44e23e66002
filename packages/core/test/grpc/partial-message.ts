import { connect } from 'node:http2';

/**
 * One HTTP/2 stream to `BentoService/Call` (a connection of its own: one connection's HTTP/2 memory cap refuses
 * more than a few) whose gRPC frame declares `declared` bytes and sends only `sent`, then waits: a message that
 * never finishes arriving. `status` resolves with the grpc-status the server ends the stream with, once it closed.
 */
export function partialGrpcMessage(
  address: string,
  declared: number,
  sent: number,
): { status: Promise<string> } {
  const session = connect(`http://${address}`);
  session.on('error', () => {});
  const stream = session.request({
    ':method': 'POST',
    ':path': '/bentoml.grpc.v1.BentoService/Call',
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  stream.on('error', () => {});
  let status = '';
  stream.on('response', (headers) => {
    status = String(headers['grpc-status'] ?? status);
  });
  stream.on('trailers', (trailers) => {
    status = String(trailers['grpc-status'] ?? status);
  });
  stream.resume();
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(declared, 1);
  stream.write(prefix);
  stream.write(Buffer.alloc(sent, 0x0a));
  return {
    status: new Promise((resolve) =>
      stream.on('close', () => {
        session.close();
        resolve(status);
      }),
    ),
  };
}
