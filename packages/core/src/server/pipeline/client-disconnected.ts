/**
 * The abort reason of a request whose client closed the connection before its answer was written: its own class,
 * so that an error a route threw (which aborts the request too, to stop its other work) is never taken for it.
 * Its name stays `Error`: what reads the reason as text (`Error: client disconnected`) reads it as before.
 */
export class ClientDisconnected extends Error {
  constructor() {
    super('client disconnected');
  }
}
