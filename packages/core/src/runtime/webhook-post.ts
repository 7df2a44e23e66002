import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/**
 * POST `body` to `url` on a connection of its own (no pool, no keep-alive), closed once the status line is in
 * or after `timeoutMs`, and settled once it is closed: one delivery in flight is one socket open, never more
 * (a pooled client may open another after an aborted request). No redirect is followed. Resolves the status;
 * rejects with a `TimeoutError` when the receiver took too long, else the connection's error.
 */
export function postOnce(
  url: URL,
  body: string,
  headers: Readonly<Record<string, string>>,
  timeoutMs: number,
): Promise<number> {
  const signal = AbortSignal.timeout(timeoutMs);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    let status: number | undefined;
    let failure: unknown;
    const request = send(
      url,
      {
        method: 'POST',
        agent: false,
        signal,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        status = response.statusCode ?? 0;
        // The answer's body is not read: closing the connection ends it.
        response.destroy();
      },
    );
    request.on('error', (err) => {
      failure ??= signal.aborted ? signal.reason : err;
    });
    // Settled once the socket is closed, so that the next delivery's socket opens after this one's is gone.
    request.on('close', () =>
      status === undefined ? reject(failure ?? new Error('closed')) : resolve(status),
    );
    request.end(body);
  });
}
